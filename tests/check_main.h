/* check_main.h - the main() every suite shares: run the suite built by
 * make_suite(), print Check's summary, exit non-zero on any failure. */
#ifndef KF_TEST_CHECK_MAIN_H
#define KF_TEST_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#include "knob_env.h"

static Suite *make_suite(void);

int main(void) {
  SRunner *runner = srunner_create(make_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
