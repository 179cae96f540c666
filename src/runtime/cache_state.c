/* cache_state.c - the kernel caches' per-context state. Owned by
 * src/runtime/cache; created lazily at the first compile. */
#include <stdlib.h>

#include "core/ctx.h"

void cache_state_destroy(struct cache_state *cache);
void cache_state_destroy(struct cache_state *cache) { free(cache); }
