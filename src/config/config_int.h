/* config_int.h - what the config's parsers share (config.c: the sections; config_rules.c:
 * rules: and alerting:). */
#ifndef SC_CONFIG_INT_H
#define SC_CONFIG_INT_H

#include <stdint.h>
#include <yaml.h>

#include "model/setting.h"
#include "config/config.h"

/* One parse: the document, the file's name for messages, the caller's error buffer. */
struct sc_cfg {
    yaml_document_t *doc;
    const char *name;
    char *err;
};

/* "config 'x.yaml' line 7: " + fmt with what; SC_EINVAL. */
int sc_cfg_fail(struct sc_cfg *c, yaml_node_t *n, const char *fmt, const char *what);
/* Node v read as setting id of settings.def: 0, or SC_EINVAL with the setting's message. */
int sc_cfg_setting(struct sc_cfg *c, yaml_node_t *v, enum sc_set_id id, struct sc_set_value *out);
/* A scalar node's text, NULL for any other node. */
const char *sc_cfg_scalar(yaml_node_t *n);
/* Refuses a mapping whose keys are not unique (libyaml does not check): SC_EINVAL. */
int sc_cfg_unique_keys(struct sc_cfg *c, yaml_node_t *map);
/* A list of non-empty strings appended to *out. */
int sc_cfg_strlist(struct sc_cfg *c, yaml_node_t *n, const char *key, char ***out, uint32_t *count);
/* A `labels:` mapping of series labels, appended to names and values. */
int sc_cfg_label_map(struct sc_cfg *c, yaml_node_t *v, char ***names, char ***values, uint32_t *n);

/* Iterates a mapping's pairs; it names the iterator, so loops can nest. */
/* NOLINTBEGIN(bugprone-macro-parentheses): it names the variable the macro declares */
#define FOR_PAIRS(c, map, it, k, v)                                                                \
    for (yaml_node_pair_t *it = (map)->data.mapping.pairs.start;                                   \
         it < (map)->data.mapping.pairs.top &&                                                     \
         ((k) = yaml_document_get_node((c)->doc, it->key),                                         \
         (v) = yaml_document_get_node((c)->doc, it->value), 1);                                    \
         it++)
/* NOLINTEND(bugprone-macro-parentheses) */

/* rules: [...] and alerting: {...} (config_rules.c). Both may come in any order: the
 * checks that need both run in sc_cfg_rules_check at the end. */
int sc_cfg_rules(struct sc_cfg *c, yaml_node_t *n, struct sc_config *cf);
int sc_cfg_alerting(struct sc_cfg *c, yaml_node_t *n, struct sc_config *cf);
int sc_cfg_rules_check(struct sc_cfg *c, struct sc_config *cf);
void sc_cfg_rules_release(struct sc_config *cf);

#endif
