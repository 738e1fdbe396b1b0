// SPDX-License-Identifier: Apache-2.0
// CImprintImpose (libImprintDocumentEngines, impose.cpp): pages of a PDF placed on printer sheets
// (n-up, fit to the paper, a blank back) with libqpdf, content carried over as form XObjects.
// Called by ImprintDocuments through the CImprintEngines table.

#ifndef CIMPRINT_IMPOSE_H
#define CIMPRINT_IMPOSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What to make: the selected pages of one PDF, one a cell, `cellCount` to a sheet side.
typedef struct CImprintImpose_Job {
  /// The PDF's bytes (not copied; must outlive the call).
  const unsigned char *bytes;
  size_t length;
  /// The password, or NULL.
  const char *password;
  /// The 1-based pages to place, in order (`pageCount` of them).
  const int32_t *pages;
  int32_t pageCount;
  /// The page count the caller counted (the quote's); another count is status 3.
  int32_t expectedPages;
  /// The sheet as it lies (landscape for 2 and 6 up), in points.
  double sheetWidth;
  double sheetHeight;
  /// The cells of a sheet side in reading order, four doubles a cell: x and y of its
  /// bottom-left corner (PDF's coordinates, y upwards from the sheet's bottom edge), width and
  /// height, in points (`cellCount` cells; ImprintCore's `SheetGrid` computes them).
  const double *cells;
  int32_t cellCount;
  /// 1: add one blank sheet side at the end (the back of a duplex job's odd last sheet).
  int32_t blankBack;
  /// The output goes to this descriptor (not closed); unused by `CImprintImpose_runToMemory`.
  int descriptor;
  /// 1: each page on a sheet of its own size (its form's box), unscaled; the sheet, the cells
  /// and `blankBack` are ignored. The pages as the print-ready file carries them: what is analysed
  /// for colour.
  int32_t ownSize;
} CImprintImpose_Job;

/// Statuses of `CImprintImpose_run`.
enum {
  CImprintImpose_ok = 0,
  /// Encrypted and the password is missing or wrong.
  CImprintImpose_password = 1,
  /// libqpdf could not read or write the document (`message` says why).
  CImprintImpose_damaged = 2,
  /// The page tree holds another number of pages than `expectedPages` (`foundPages`).
  CImprintImpose_pageCount = 3,
  /// A selected page's box is empty, negative or not finite (`page`).
  CImprintImpose_emptyPage = 4,
  /// Writing to the descriptor failed (`systemError` is errno).
  CImprintImpose_writeFailed = 5,
  /// The job itself is wrong (a page outside the document, no cells, an empty sheet).
  CImprintImpose_badJob = 6,
  /// An allocation failed (the worker's memory limit).
  CImprintImpose_outOfMemory = 7,
};

/// What happened.
typedef struct CImprintImpose_Result {
  int32_t status;
  /// Sheet sides written (the pages of the output), blank backs included.
  int32_t sheetSides;
  /// The pages the page tree holds.
  int32_t foundPages;
  /// The page a status names (1-based), or 0.
  int32_t page;
  /// errno of a failed write.
  int32_t systemError;
  /// libqpdf's own text, NUL-terminated, possibly cut.
  char message[512];
} CImprintImpose_Result;

/// Reads the PDF, places the pages and writes the sheets to `job->descriptor`.
///
/// Every C++ exception is caught here; nothing is written to stdout or stderr. The output is
/// deterministic (same input, same bytes). Returns `result->status`.
int32_t CImprintImpose_run(const CImprintImpose_Job *job, CImprintImpose_Result *result);

/// Writes the PDF in `bytes` (`length` of them) to `descriptor` as it is, but without its
/// `/CreationDate` and `/ModDate` and with an `/ID` made from its content: a converter's PDF
/// made deterministic (same input, same bytes). `result->foundPages` (and `sheetSides`) is its
/// page count. Every C++ exception is caught here. Returns `result->status`.
int32_t CImprintImpose_normalize(const unsigned char *bytes, size_t length, int descriptor,
                                 CImprintImpose_Result *result);

/// A PDF written to memory by `CImprintImpose_runToMemory`: `length` bytes at `bytes`, valid
/// until `CImprintImpose_free` (which `owner` is for).
typedef struct CImprintImpose_Output {
  const unsigned char *bytes;
  size_t length;
  void *owner;
} CImprintImpose_Output;

/// `CImprintImpose_run`, the PDF kept in memory: on success `output` holds it (released with
/// `CImprintImpose_free`); on failure its `bytes` is NULL.
int32_t CImprintImpose_runToMemory(const CImprintImpose_Job *job, CImprintImpose_Result *result,
                                   CImprintImpose_Output *output);

/// Releases what `CImprintImpose_runToMemory` wrote to `output` (nothing when it failed).
void CImprintImpose_free(CImprintImpose_Output *output);

#ifdef __cplusplus
}
#endif

#endif
