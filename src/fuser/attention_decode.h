/* attention_decode.h - whether an attention match runs as the split-key
 * decode kernel (templates/attention_decode.cu): few queries against a key
 * cache, the query heads that share one k/v head taken together. A pure
 * function of the graph (attention_decode.c), unit-tested without a GPU. */
#ifndef KF_FUSER_ATTENTION_DECODE_H
#define KF_FUSER_ATTENTION_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuser/attention.h"

/* Most queries per head the decode kernel takes (issue 22: decode with
 * 1-16 queries). */
#define FUSE_DECODE_MAX_QUERIES 16
/* Most score rows (query heads x queries) one block of the decode kernel
 * holds: four 16-row tiles of the tensor-core product. */
#define FUSE_DECODE_MAX_ROWS 64

/* How the decode kernel covers a match. */
typedef struct fuse_attn_decode {
  int64_t share; /* consecutive query heads (batch entries of the scores)
                    that read the same k and v rows: GQA's group, MQA's all */
  int64_t group; /* the heads one block takes: the largest divisor of share
                    with group x sq <= FUSE_DECODE_MAX_ROWS */
  int64_t rows;  /* group x sq */
  int64_t pairs; /* blocks of rows: batch / group */
} fuse_attn_decode;

/* The largest g dividing a->batch such that every batch entry bt reads the
 * k rows and the v rows that entry bt - bt % g reads (through the layout ops
 * among nodes[0..n), the match's members, and the product's broadcasting):
 * k and v are then read once for g heads. 1 when nothing is shared. */
int64_t fuse_attn_shared_heads(const kf_graph *g, const fuse_attn *a, const int32_t *nodes,
                               int32_t n);

/* Whether the decode kernel takes match a (nodes[0..n) its members): at
 * most FUSE_DECODE_MAX_QUERIES queries. *out says how; why says why or why
 * not, for the decision log. */
bool fuse_attn_decode_pick(const kf_graph *g, const fuse_attn *a, const int32_t *nodes, int32_t n,
                           fuse_attn_decode *out, char *why, size_t whysize);

#endif
