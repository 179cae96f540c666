/* fuzz_yaml.c - libFuzzer harness for the YAML loader: any input must load or
 * fail cleanly, and whatever loads must save and load back to the same hash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfuse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A loaded graph that does not survive save + load is a bug as real as a
 * crash: report it as one. */
static void round_trip(kf_ctx *ctx, kf_graph *g) {
  char *text = kf_graph_to_yaml(g);
  if (!text) {
    fprintf(stderr, "a loaded graph cannot be saved: %s\n", kf_graph_errmsg(g));
    abort();
  }
  kf_graph *again = NULL;
  if (kf_graph_load_yaml_string(ctx, text, strlen(text), "resaved.yaml", &again) != KF_OK) {
    fprintf(stderr, "a saved graph does not load: %s\n---\n%s", kf_ctx_errmsg(ctx), text);
    abort();
  }
  kf_hash128 a = kf_graph_hash(g), b = kf_graph_hash(again);
  if (a.lo != b.lo || a.hi != b.hi) {
    fprintf(stderr, "the hash changed across save + load\n---\n%s", text);
    abort();
  }
  kf_graph_destroy(again);
  kf_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static kf_ctx *ctx;
  if (!ctx) {
    /* the parser itself, every time: no parsed-graph cache (large inputs
     * would otherwise load from it, and write to the user's cache folder) */
    setenv("KFUSE_DISK_CACHE", "0", 1);
    if (kf_ctx_create(&ctx) != KF_OK) abort();
  }
  kf_graph *g = NULL;
  kf_status st = kf_graph_load_yaml_string(ctx, (const char *)data, size, "fuzz.yaml", &g);
  if (st == KF_OK) {
    round_trip(ctx, g);
    kf_graph_destroy(g);
  } else if (g != NULL || kf_ctx_errmsg(ctx)[0] == '\0') {
    fprintf(stderr, "a failed load left a graph or no message\n");
    abort();
  }
  return 0;
}
