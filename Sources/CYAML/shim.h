#ifndef SYNCFILES_CYAML_SHIM_H
#define SYNCFILES_CYAML_SHIM_H
#include <yaml.h>
#include <stddef.h>

// Typed accessors for the unions inside yaml_event_t, so Swift code never
// reaches into C unions directly.
static inline const char *sf_yaml_scalar_value(const yaml_event_t *e) {
  return (const char *)e->data.scalar.value;
}
static inline size_t sf_yaml_scalar_length(const yaml_event_t *e) {
  return e->data.scalar.length;
}
static inline yaml_scalar_style_t sf_yaml_scalar_style(const yaml_event_t *e) {
  return e->data.scalar.style;
}
static inline const char *sf_yaml_scalar_anchor(const yaml_event_t *e) {
  return (const char *)e->data.scalar.anchor;
}
static inline const char *sf_yaml_scalar_tag(const yaml_event_t *e) {
  return (const char *)e->data.scalar.tag;
}
static inline const char *sf_yaml_alias_anchor(const yaml_event_t *e) {
  return (const char *)e->data.alias.anchor;
}
static inline const char *sf_yaml_sequence_anchor(const yaml_event_t *e) {
  return (const char *)e->data.sequence_start.anchor;
}
static inline const char *sf_yaml_sequence_tag(const yaml_event_t *e) {
  return (const char *)e->data.sequence_start.tag;
}
static inline const char *sf_yaml_mapping_anchor(const yaml_event_t *e) {
  return (const char *)e->data.mapping_start.anchor;
}
static inline const char *sf_yaml_mapping_tag(const yaml_event_t *e) {
  return (const char *)e->data.mapping_start.tag;
}
#endif
