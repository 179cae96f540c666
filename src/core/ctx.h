/* ctx.h - the context: last error, log levels (core/log.h), and slots for the per-module
 * state that upper layers hang on it (src/pipeline/context.c creates it). */
#ifndef KF_CORE_CTX_H
#define KF_CORE_CTX_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/log.h"
#include "kfuse.h"

/* Opaque slots for the state that upper layers hang on a context (the
 * runtime's driver state and caches); core never looks inside them, and
 * the pipeline, which creates and destroys contexts, releases them. */
struct rt_state;
struct cache_state;

struct kf_ctx {
  pthread_mutex_t lock; /* guards errmsg and the lazily created states */
  char errmsg[8192];
  kf_log_fn log_fn; /* NULL: the stderr logger */
  void *log_user;
  kf_log_level levels[LOG_COMPONENT_COUNT];
  struct rt_state *rt;
  struct cache_state *cache;
  _Atomic(void *) knobs_warned; /* the knob snapshot whose warnings it logged */
  /* Set by the first compile that takes on setting up the device runtime
   * beside its kernels (pipeline/matmul_choice.c): later ones leave it to
   * that one instead of holding a compile worker on the same lock. */
  atomic_bool setup_claimed;
};

/* Records the message of a failing call on the context; returns st. ctx may
 * be NULL (then nothing is recorded). Thread-safe. */
kf_status core_error(kf_ctx *ctx, kf_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
kf_status core_verror(kf_ctx *ctx, kf_status st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* The same, and the message also into buf[0..size) (a handle's own last
 * message, such as a plan's). */
kf_status core_error_buf(kf_ctx *ctx, char *buf, size_t size, kf_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
