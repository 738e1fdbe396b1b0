// SPDX-License-Identifier: Apache-2.0
// imprint: the command-line entry point; everything else lives in ImprintCLI.

import Foundation
import ImprintCLI

ImprintCLI.prestartWorkers()
ImprintCLI.configureProcess()
let code = await ImprintCLI.run(
  Array(CommandLine.arguments.dropFirst()),
  console: Console(stdout: StandardStream.output, stderr: StandardStream.error))
exit(code)
