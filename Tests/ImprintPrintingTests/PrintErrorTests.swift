// SPDX-License-Identifier: Apache-2.0
// ImprintPrintingTests: PrintError, the print.* failures once DocumentError's: each case's code
// and message as they were, and the HTTP status the service answers them with.

import ImprintCore
import ImprintPrinting
import ImprintTestSupport
import Testing

@Suite("PrintError: a printer's failures, their codes and their status", .liveHandlesChecked)
struct PrintErrorTests {
  /// One of each case, with its code and message.
  static let cases: [(PrintError, String, String)] = [
    (
      .unreachable(printer: "ipp://p/ipp/print", detail: "cups: No route"), "print.unreachable",
      "cannot reach the printer 'ipp://p/ipp/print' (cups: No route)"
    ),
    (
      .refused(file: "a.pdf", printer: "shop", detail: "Create-Job: Bad media"), "print.refused",
      "the printer 'shop' refused 'a.pdf' (Create-Job: Bad media)"
    ),
    (
      .unconfirmed(file: "a.pdf", printer: "shop", jobID: 7, journal: "j.json"),
      "print.unconfirmed",
      "'a.pdf' may have been printed already: job 7 on 'shop' was created, but 'j.json' does "
        + "not record that the printer took the whole document"
    ),
    (
      .journalDamaged(path: "j.json", reason: "not a print journal"), "print.journalDamaged",
      "the print journal 'j.json' cannot be read (not a print journal)"
    ),
    (
      .claimedByAnother(file: "a.pdf", part: "whole"), "print.claimedByAnother",
      "'a.pdf' (whole) may have been printed already: another run of this job claimed it for "
        + "printing and stopped before its journal said whether the printer took it"
    ),
    (
      .unclaimed(
        file: "a.pdf", part: "mono", reason: "this replica no longer holds the job"),
      "print.unclaimed", "'a.pdf' (mono) was not sent: this replica no longer holds the job"
    ),
    (
      .partlySent(
        file: "a.pdf", sent: ["the color part as job 3 on 'shop'"], parts: 2, now: 1,
        journal: "j.json"),
      "print.partlySent",
      "'a.pdf' was partly sent by an earlier run that split it into 2 parts (the color part as "
        + "job 3 on 'shop'), and this run makes 1 part of it: sending them could print sheets "
        + "twice"
    ),
    (
      .jobEnded(
        file: "a.pdf", printer: "shop", jobID: 4, state: "aborted",
        reasons: ["aborted-by-system"], message: "jam"),
      "print.aborted", "job 4 of 'a.pdf' on 'shop' was aborted (aborted-by-system: jam)"
    ),
    (
      .jobEnded(
        file: "a.pdf", printer: "shop", jobID: 4, state: "canceled", reasons: [], message: nil),
      "print.canceled", "job 4 of 'a.pdf' on 'shop' was canceled ()"
    ),
    (
      .waitTimedOut(file: "a.pdf", printer: "shop", jobID: 5, state: "processing", seconds: 300),
      "print.timeout", "job 5 of 'a.pdf' on 'shop' is still processing after 300 s"
    ),
    (
      .jobUnknown(file: "a.pdf", printer: "shop", jobID: 9), "print.jobUnknown",
      "the printer 'shop' does not know job 9 of 'a.pdf'"
    ),
    (
      .unknownPrinter(printer: "desk", scheduler: "127.0.0.1:631"), "print.unknownPrinter",
      "the CUPS scheduler at '127.0.0.1:631' has no queue named 'desk'"
    ),
    (
      .unauthorized(printer: "shop", user: "clerk", detail: "Create-Job: Unauthorized"),
      "print.unauthorized",
      "the printer 'shop' refused the credentials of 'clerk' (Create-Job: Unauthorized)"
    ),
    (
      .unauthorized(printer: "shop", user: nil, detail: "Create-Job: Unauthorized"),
      "print.unauthorized",
      "the printer 'shop' asks for credentials and none were given (Create-Job: Unauthorized)"
    ),
    (
      .passwordFile(path: "pw", problem: "it has no ':'"), "print.passwordFile",
      "the password file 'pw' cannot be used: it has no ':'"
    ),
    (
      .insecureCredentials(printer: "ipp://far/ipp/print"), "print.insecureCredentials",
      "the printer 'ipp://far/ipp/print' asks for credentials over an unencrypted connection to "
        + "another machine; the password was not sent"
    ),
  ]

  @Test("each case keeps the code and message it had as a DocumentError, and has a hint")
  func codesAndMessages() {
    for (error, code, message) in Self.cases {
      #expect(error.code == code)
      #expect(error.message == message)
      #expect(error.hint?.isEmpty == false, "\(code)")
    }
  }

  @Test("the service answers every print error with 422, as it did")
  func status() {
    #expect(Self.cases.allSatisfy { $0.0.status == 422 })
  }
}
