/* version.c - the version of the loaded library, and kf_free. */
#include <stdlib.h>

#include "kfuse.h"

const char *kf_version(void) { return KFUSE_VERSION_STRING; }

int kf_version_number(void) { return KFUSE_VERSION_NUMBER; }

void kf_free(void *ptr) { free(ptr); }
