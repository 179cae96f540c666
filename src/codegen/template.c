/* template.c - finding a template (embedded, or $KFUSE_TEMPLATE_DIR during
 * development) and filling its {{holes}}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/templates.h"

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

char *cg_template_text(const char *name, char *err, size_t errsize) {
  const char *dir = getenv("KFUSE_TEMPLATE_DIR");
  if (dir && *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = read_file(path);
    if (!text) snprintf(err, errsize, "template %s not readable (KFUSE_TEMPLATE_DIR)", path);
    return text;
  }
  for (const cg_template *t = cg_templates; t->name; t++)
    if (strcmp(t->name, name) == 0) {
      char *text = malloc(t->size + 1);
      if (!text) {
        snprintf(err, errsize, "out of memory");
        return NULL;
      }
      memcpy(text, t->text, t->size + 1);
      return text;
    }
  snprintf(err, errsize, "no embedded template %s", name);
  return NULL;
}

bool cg_fill(cg_buf *out, const char *name, const cg_hole *holes, int n_holes, char *err,
             size_t errsize) {
  char *text = cg_template_text(name, err, errsize);
  if (!text) return false;
  const char *p = text;
  bool ok = true;
  while (ok) {
    const char *open = strstr(p, "{{");
    if (!open) {
      cg_puts(out, p);
      break;
    }
    const char *close = strstr(open + 2, "}}");
    if (!close) {
      snprintf(err, errsize, "template %s: unterminated {{", name);
      ok = false;
      break;
    }
    cg_printf(out, "%.*s", (int)(open - p), p);
    size_t len = (size_t)(close - open - 2);
    int i = 0;
    while (i < n_holes && (strlen(holes[i].name) != len || memcmp(holes[i].name, open + 2, len)))
      i++;
    if (i == n_holes) {
      snprintf(err, errsize, "template %s: unknown hole {{%.*s}}", name, (int)len, open + 2);
      ok = false;
      break;
    }
    cg_puts(out, holes[i].text);
    p = close + 2;
  }
  free(text);
  return ok;
}
