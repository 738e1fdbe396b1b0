// SPDX-License-Identifier: Apache-2.0
// llhttp (Node.js's HTTP/1.1 parser), from Debian's node-llhttp: its header as Debian installs
// it. Under this name so that llhttp's own sources, compiled by llhttp.c beside this folder,
// find it with their `#include "llhttp.h"`.
#pragma once
#include "/usr/share/include/llhttp/llhttp.h"
