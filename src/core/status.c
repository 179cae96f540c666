/* status.c - names and messages of kf_status, expanded from KF_STATUS_MAP. */
#include "kfuse.h"

const char *kf_status_str(kf_status status) {
  switch (status) {
#define KF_STATUS_STR_(name, msg) \
  case KF_##name:                 \
    return msg;
    KF_STATUS_MAP(KF_STATUS_STR_)
#undef KF_STATUS_STR_
  default:
    return "unknown status";
  }
}

const char *kf_status_name(kf_status status) {
  switch (status) {
#define KF_STATUS_NAME_(name, msg) \
  case KF_##name:                  \
    return #name;
    KF_STATUS_MAP(KF_STATUS_NAME_)
#undef KF_STATUS_NAME_
  default:
    return "UNKNOWN";
  }
}
