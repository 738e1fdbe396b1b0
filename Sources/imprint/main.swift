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
exit(code)
