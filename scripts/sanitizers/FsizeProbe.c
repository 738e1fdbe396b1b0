// SPDX-License-Identifier: Apache-2.0
// Shows that a ThreadSanitizer program cannot run under a small RLIMIT_FSIZE (the reason the
// full-disk tests fail under scripts/sanitize thread), with no Imprint code involved:
//
//   L=/opt/swift/usr/lib/swift/linux
//   clang -fsanitize=thread -g -O1 scripts/sanitizers/FsizeProbe.c -o .build/fsize-probe \
//     -L$L -ldispatch -lBlocksRuntime -Wl,-rpath,$L
//   .build/fsize-probe                        # ok
//   prlimit --fsize=2000 .build/fsize-probe   # ThreadSanitizer: BUS, exit 66
//   prlimit --fsize=1000000 .build/fsize-probe  # ok
//
// strace shows why: at start-up the runtime creates $TMPDIR/tsan.rodata.PID, writes 512 KiB of
// shadow markers to it (the write returns 2000 under the limit, unchecked) and maps it over the
// shadow of read-only memory; touching that shadow past the file's end raises SIGBUS.
// Measured on Swift 6.3.1's clang 21 runtime.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *unused) {
  (void)unused;
  char *text = malloc(1 << 20);
  memset(text, 'a', (1 << 20) - 1);
  text[(1 << 20) - 1] = 0;
  size_t length = strlen(text);
  free(text);
  return (void *)length;
}

int main(void) {
  pthread_t threads[8];
  for (int i = 0; i < 8; i++) pthread_create(&threads[i], 0, work, 0);
  for (int i = 0; i < 8; i++) pthread_join(threads[i], 0);
  puts("ok");
  return 0;
}
