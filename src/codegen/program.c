/* program.c - a plan's generated code: CUDA C and compiled images per
 * launch; creating and freeing it. */
#include "codegen/program.h"

#include <stdlib.h>

#include "codegen/emit.h"
#include "core/alloc.h"

cg_program *cg_program_new(int n_launches) {
  if (n_launches < 0) return NULL;
  cg_program *prog = core_calloc(1, sizeof *prog);
  if (!prog) return NULL;
  prog->launches = core_calloc((size_t)(n_launches ? n_launches : 1), sizeof *prog->launches);
  if (!prog->launches) {
    free(prog);
    return NULL;
  }
  prog->n_launches = n_launches;
  return prog;
}

void cg_program_free(struct cg_program *code) {
  if (!code) return;
  for (int i = 0; i < code->n_launches; i++) {
    cg_launch_src_free(&code->launches[i].src);
    free(code->launches[i].image);
    free(code->launches[i].log);
  }
  free(code->launches);
  free(code);
}
