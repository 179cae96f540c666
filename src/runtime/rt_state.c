/* rt_state.c - the runtime's per-context state (driver, device, streams).
 * Owned by src/runtime; created lazily at the first call that needs it. */
#include <stdlib.h>

#include "core/ctx.h"

void rt_state_destroy(struct rt_state *rt);
void rt_state_destroy(struct rt_state *rt) { free(rt); }
