/* template.c - finding a template (embedded, or $KFUSE_TEMPLATE_DIR during
 * development) and filling its {{holes}}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/template.h"
#include "codegen/templates.h"
#include "core/alloc.h"
#include "core/knobs.h"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  cg_buf b = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
    chunk[n] = '\0';
    if (memchr(chunk, '\0', n)) break; /* a binary file is not a template */
    cg_puts(&b, chunk);
  }
  bool bad = ferror(f) != 0;
  fclose(f);
  if (bad) {
    cg_buf_free(&b);
    return NULL;
  }
  return cg_buf_take(&b);
}

/* The embedded text of template name, or NULL. */
static const cg_template *embedded(const char *name) {
  for (const cg_template *t = cg_templates; t->name; t++)
    if (strcmp(t->name, name) == 0) return t;
  return NULL;
}

/* KFUSE_TEMPLATE_DIR (core/knobs.def), or NULL when unset or empty: a
 * development setting of the process, the same for every target. */
static const char *template_dir(void) { return core_knobs_quiet()->template_dir; }

static char *read_dev_template(const char *dir, const char *name, char *err, size_t errsize) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *text = read_file(path);
  if (!text) snprintf(err, errsize, "template %s not readable (KFUSE_TEMPLATE_DIR)", path);
  return text;
}

char *cg_template_text(const char *name, char *err, size_t errsize) {
  const char *dir = template_dir();
  if (dir) return read_dev_template(dir, name, err, errsize);
  const cg_template *t = embedded(name);
  if (!t) {
    snprintf(err, errsize, "no embedded template %s", name);
    return NULL;
  }
  char *text = core_malloc(t->size + 1);
  if (!text) {
    snprintf(err, errsize, "out of memory");
    return NULL;
  }
  memcpy(text, t->text, t->size + 1);
  return text;
}

/* Appends text with its holes filled; false (err) on a bad hole. */
static bool fill_text(cg_buf *out, const char *name, const char *text, const cg_hole *holes,
                      int n_holes, char *err, size_t errsize) {
  const char *p = text;
  for (;;) {
    const char *open = strstr(p, "{{");
    if (!open) {
      cg_puts(out, p);
      return true;
    }
    const char *close = strstr(open + 2, "}}");
    if (!close) {
      snprintf(err, errsize, "template %s: unterminated {{", name);
      return false;
    }
    cg_putn(out, p, (size_t)(open - p));
    size_t len = (size_t)(close - open - 2);
    int i = 0;
    while (i < n_holes && (strlen(holes[i].name) != len || memcmp(holes[i].name, open + 2, len)))
      i++;
    if (i == n_holes) {
      snprintf(err, errsize, "template %s: unknown hole {{%.*s}}", name, (int)len, open + 2);
      return false;
    }
    cg_puts(out, holes[i].text);
    p = close + 2;
  }
}

/* The embedded text is filled in place (no copy): this runs once per part,
 * 200 times for a 200-part launch. */
bool cg_fill(cg_buf *out, const char *name, const cg_hole *holes, int n_holes, char *err,
             size_t errsize) {
  const char *dir = template_dir();
  if (!dir) {
    const cg_template *t = embedded(name);
    if (t) return fill_text(out, name, t->text, holes, n_holes, err, errsize);
    snprintf(err, errsize, "no embedded template %s", name);
    return false;
  }
  char *text = read_dev_template(dir, name, err, errsize);
  if (!text) return false;
  bool ok = fill_text(out, name, text, holes, n_holes, err, errsize);
  free(text);
  return ok;
}
