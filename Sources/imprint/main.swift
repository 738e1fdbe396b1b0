// SPDX-License-Identifier: Apache-2.0
// imprint: the command-line entry point; everything else lives in ImprintCLI. Like any program
// that hosts document workers, it lets ImprintDocuments serve as one first (`__worker`).

import Foundation
import ImprintCLI
import ImprintDocuments

DocumentWorker.runIfWorker()
ImprintCLI.prestartWorkers()
ImprintCLI.configureProcess()
let code = await ImprintCLI.run(
  Array(CommandLine.arguments.dropFirst()),
  console: Console(stdout: StandardStream.output, stderr: StandardStream.error))
// The command stopped and reaped the workers it used; those forked at start-up that it did not
// take (a usage error, files refused before any work) are stopped and reaped here, so that none
// outlives the process and their CPU time counts in its own.
PrestartedWorkers.stopAll()
// The command is over: its output went out with write(2), its files are synced and renamed, its
// workers reaped. What may still run are threads the command no longer waits for — a photo
// download's thread between handing over its result and ending, an abandoned name lookup past
// the download's deadline, Dispatch's idle workers. exit() would run every library's
// destructors (Foundation's, libdispatch's, OpenSSL's) under them; a download thread caught
// there ended a refused `--fetch-photo` with SIGSEGV after its correct error (seen once under
// load; gdb at exit() shows that thread still inside the continuation's resume). `_exit` ends
// the process without them; stdio is flushed first for anything that used it.
fflush(nil)
_exit(code)
