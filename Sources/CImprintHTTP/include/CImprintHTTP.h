// SPDX-License-Identifier: Apache-2.0
// The HTTP server's C side (ImprintService/HTTPServer.swift imports it alone): llhttp, and the
// kernel's poll, eventfd and socket calls Swift's Glibc module leaves out.
#pragma once
#include "llhttp.h"
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// poll's POLLRDHUP (the peer shut its writing side: it closed the connection) needs
// _GNU_SOURCE, which Swift's Glibc module is not built with.
static const short CImprintHTTP_POLLRDHUP = 0x2000;

// accept4 (a connection's socket made close-on-exec as it is accepted, so that no document
// worker started meanwhile inherits it) is declared by sys/socket.h under _GNU_SOURCE only.
extern int accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);

// glibc's malloc_trim: after a request with a large body, the heap's free pages go back to the
// system (HTTPConnection.swift says when).
#include <malloc.h>
