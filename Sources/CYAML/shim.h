#ifndef SYNCFILES_CYAML_SHIM_H
#define SYNCFILES_CYAML_SHIM_H
// libyaml as it is: Swift reads the unions of yaml_event_t itself.
#include <yaml.h>
#endif
