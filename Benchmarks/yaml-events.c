/* The W5 floor: libyaml reads a manifest and counts its events, nothing more.
   cc -O2 -o yaml-events Benchmarks/yaml-events.c -lyaml; yaml-events FILE */
#include <stdio.h>
#include <yaml.h>

int main(int argc, char **argv) {
  FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (!f) return 2;
  yaml_parser_t parser;
  yaml_event_t event;
  long events = 0;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, f);
  for (;;) {
    if (!yaml_parser_parse(&parser, &event)) return 1;
    int end = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    events++;
    if (end) break;
  }
  yaml_parser_delete(&parser);
  printf("%ld events\n", events);
  return 0;
}
