/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_report over decompressed content, framed by the target (see
 * fuzz_report.c). */
#define FUZZ_REPORT_CONTENT 1
#include "fuzz_report.c"
