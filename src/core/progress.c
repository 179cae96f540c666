/* progress.c - a self-erasing progress line on stderr, drawn only on a
 * terminal and only for long batches, so logs and pipes stay clean. */
#include "core/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/knobs.h"

#define PROGRESS_MIN_STEPS 8
#define PROGRESS_DELAY_MS 500.0

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* KFUSE_PROGRESS=0: never; =1: from the first step, however short the
 * batch (still only on a terminal: tests and demos use it). */
static bool wanted(const kf_ctx *ctx, int total, bool *at_once) {
  long knob = core_knobs_get((kf_ctx *)ctx)->progress; /* -1: unset */
  *at_once = knob == 1;
  if (knob == 0) return false;
  if (ctx && ctx->log_fn) return false; /* an embedder: its own UI */
  return total > 0 && (*at_once || total >= PROGRESS_MIN_STEPS) && isatty(STDERR_FILENO);
}

void core_progress_begin(core_progress *p, const kf_ctx *ctx, const char *what, int total) {
  bool at_once;
  p->what = what ? what : "working";
  p->total = wanted(ctx, total, &at_once) ? total : 0; /* 0: stay silent */
  atomic_store(&p->done, 0);
  atomic_store(&p->shown, false);
  p->t0_ms = now_ms() - (at_once ? PROGRESS_DELAY_MS : 0);
}

void core_progress_step(core_progress *p) {
  int done = atomic_fetch_add(&p->done, 1) + 1;
  if (p->total <= 0 || now_ms() - p->t0_ms < PROGRESS_DELAY_MS) return;
  atomic_store(&p->shown, true);
  /* One write per line, so lines from several workers do not interleave. */
  char line[160];
  int n = snprintf(line, sizeof line, "\rkfuse: %s %d/%d ", p->what, done, p->total);
  if (n > 0) (void)!write(STDERR_FILENO, line, (size_t)n);
}

void core_progress_end(core_progress *p) {
  if (!atomic_load(&p->shown)) return;
  static const char erase[] = "\r\033[K";
  (void)!write(STDERR_FILENO, erase, sizeof erase - 1);
}
