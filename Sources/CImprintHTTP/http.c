// SPDX-License-Identifier: Apache-2.0
// llhttp 8.1 as Debian's node-llhttp ships it (/usr/share/llhttp: http.c), compiled into Imprint:
// Debian packages its sources, not a shared library. Its `#include "llhttp.h"` finds
// include/llhttp.h, which includes Debian's header. One file each: they are separate units.
#include "/usr/share/llhttp/http.c"
