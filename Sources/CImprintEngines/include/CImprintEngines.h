// SPDX-License-Identifier: Apache-2.0
// CImprintEngines: what ImprintDocuments calls of poppler, poppler-glib and qpdf, as one table
// of functions that the library ImprintDocumentEngines (libImprintDocumentEngines.so, the
// CImprintDocumentEngines target) fills, and the loader that finds it.
//
// Why a table and a library of its own: an executable linked with poppler, poppler-glib and qpdf
// maps and binds them and the 16 libraries they need (NSS, GnuTLS, lcms2, OpenJPEG...) at every
// start, 7.7 ms of CPU on the 2-core machine (an empty C program: 13.2 ms with `imprint`'s 26
// libraries, 5.5 ms without those three), whether the run reads a document or draws 200 cards.
// `imprint` links none of them: a run that reads documents loads the library once, before its
// workers fork, and a card or QR run never does. A program that links the ImprintDocumentEngines
// product (examples/backend, the fuzzers) uses its table directly; the tests load the library
// from beside their executable, as `imprint` does.
//
// This header includes no poppler header (their include paths come from pkg-config, which would
// link them): poppler-glib's types are declared here as poppler declares them, and the library's
// table.c, compiled with poppler's and qpdf's own headers, checks every entry's type.

#ifndef CIMPRINT_ENGINES_H
#define CIMPRINT_ENGINES_H

#include <cairo.h>
#include <glib.h>
#include <qpdf/qpdf-c.h>
#include <stddef.h>

#include "impose.h"
#include "splash.h"

#ifdef __cplusplus
extern "C" {
#endif

// The table's entries are never NULL (`_Nonnull`); their parameters are as unannotated as in
// poppler's and qpdf's own headers.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

typedef struct _PopplerDocument PopplerDocument;
typedef struct _PopplerPage PopplerPage;

/// The table's layout version: the loader refuses a library built from other sources.
#define CIMPRINT_ENGINES_VERSION 1

typedef struct CImprintEngines {
  int version;
  /// sizeof(CImprintEngines) where the library was built: a table of another layout is refused.
  size_t size;

  // poppler-glib (PDFDocument: cairo rendering of print previews and sheets).
  PopplerDocument *(*_Nonnull poppler_document_new_from_bytes)(
      GBytes *bytes, const char *password, GError **error);
  int (*_Nonnull poppler_document_get_n_pages)(PopplerDocument *document);
  PopplerPage *(*_Nonnull poppler_document_get_page)(PopplerDocument *document, int index);
  /// poppler_document_get_permissions, as its flags' integer value.
  unsigned int (*_Nonnull poppler_document_permissions)(PopplerDocument *document);
  void (*_Nonnull poppler_page_get_size)(
      PopplerPage *page, double *width, double *height);
  void (*_Nonnull poppler_page_render)(PopplerPage *page, cairo_t *cairo);
  void (*_Nonnull poppler_page_render_for_printing)(
      PopplerPage *page, cairo_t *cairo);
  /// POPPLER_ERROR_ENCRYPTED, POPPLER_ERROR_DAMAGED, POPPLER_PERMISSIONS_OK_TO_PRINT.
  int poppler_error_encrypted;
  int poppler_error_damaged;
  unsigned int poppler_permission_print;

  // qpdf's C API (PageTree: the page tree walked, passwords told).
  qpdf_data (*_Nonnull qpdf_init)(void);
  void (*_Nonnull qpdf_cleanup)(qpdf_data *qpdf);
  QPDF_ERROR_CODE (*_Nonnull qpdf_read_memory)(
      qpdf_data qpdf, char const *description, char const *buffer,
      unsigned long long size, char const *password);
  void (*_Nonnull qpdf_silence_errors)(qpdf_data qpdf);
  void (*_Nonnull qpdf_set_suppress_warnings)(qpdf_data qpdf, QPDF_BOOL value);
  QPDF_BOOL (*_Nonnull qpdf_has_error)(qpdf_data qpdf);
  qpdf_error (*_Nonnull qpdf_get_error)(qpdf_data qpdf);
  enum qpdf_error_code_e (*_Nonnull qpdf_get_error_code)(
      qpdf_data q, qpdf_error e);
  char const * (*_Nonnull qpdf_get_error_full_text)(
      qpdf_data q, qpdf_error e);
  QPDF_BOOL (*_Nonnull qpdf_more_warnings)(qpdf_data qpdf);
  qpdf_error (*_Nonnull qpdf_next_warning)(qpdf_data qpdf);
  QPDF_BOOL (*_Nonnull qpdf_is_encrypted)(qpdf_data qpdf);
  qpdf_oh (*_Nonnull qpdf_get_root)(qpdf_data qpdf);
  qpdf_oh (*_Nonnull qpdf_get_page_n)(qpdf_data qpdf, size_t zero_based_index);
  void (*_Nonnull qpdf_oh_release)(qpdf_data qpdf, qpdf_oh oh);
  qpdf_oh (*_Nonnull qpdf_oh_get_key)(qpdf_data qpdf, qpdf_oh oh, char const *key);
  QPDF_BOOL (*_Nonnull qpdf_oh_is_name_and_equals)(
      qpdf_data qpdf, qpdf_oh oh, char const *name);
  QPDF_BOOL (*_Nonnull qpdf_oh_is_integer)(qpdf_data qpdf, qpdf_oh oh);
  QPDF_BOOL (*_Nonnull qpdf_oh_is_number)(qpdf_data qpdf, qpdf_oh oh);
  QPDF_BOOL (*_Nonnull qpdf_oh_is_dictionary)(qpdf_data qpdf, qpdf_oh oh);
  QPDF_BOOL (*_Nonnull qpdf_oh_is_array)(qpdf_data qpdf, qpdf_oh oh);
  QPDF_BOOL (*_Nonnull qpdf_oh_is_stream)(qpdf_data qpdf, qpdf_oh oh);
  long long (*_Nonnull qpdf_oh_get_int_value)(qpdf_data qpdf, qpdf_oh oh);
  double (*_Nonnull qpdf_oh_get_numeric_value)(qpdf_data qpdf, qpdf_oh oh);
  int (*_Nonnull qpdf_oh_get_object_id)(qpdf_data qpdf, qpdf_oh oh);
  int (*_Nonnull qpdf_oh_get_array_n_items)(qpdf_data qpdf, qpdf_oh oh);
  qpdf_oh (*_Nonnull qpdf_oh_get_array_item)(qpdf_data qpdf, qpdf_oh oh, int n);
  qpdf_oh (*_Nonnull qpdf_oh_get_dict)(qpdf_data qpdf, qpdf_oh oh);
  void (*_Nonnull qpdf_oh_begin_dict_key_iter)(qpdf_data qpdf, qpdf_oh dict);
  QPDF_BOOL (*_Nonnull qpdf_oh_dict_more_keys)(qpdf_data qpdf);
  char const * (*_Nonnull qpdf_oh_dict_next_key)(qpdf_data qpdf);

  // Imprint's own C++ over poppler (splash.h: thumbnails) and qpdf (impose.h: sheets).
  void (*_Nonnull splash_keep_global_params)(void);
  CImprintSplash_Document * (*_Nonnull splash_open)(
      const unsigned char *bytes, size_t length, const char *password,
      CImprintSplash_JPEGDecode decode, int *status);
  void (*_Nonnull splash_close)(CImprintSplash_Document *document);
  int (*_Nonnull splash_page_count)(CImprintSplash_Document *document);
  int (*_Nonnull splash_page_size)(
      CImprintSplash_Document *document, int index, double *width,
      double *height);
  int (*_Nonnull splash_render)(
      CImprintSplash_Document *document, int index, double xdpi, double ydpi, int width,
      int height, uint32_t *pixels, size_t stride, int *reducedImages);
  void (*_Nonnull splash_font_counts)(
      CImprintSplash_Document *document, int *fontsMade,
      int *pagesDrawn);
  int32_t (*_Nonnull impose_run)(
      const CImprintImpose_Job *job, CImprintImpose_Result *result);
  int32_t (*_Nonnull impose_normalize)(
      const unsigned char *bytes, size_t length, int descriptor,
      CImprintImpose_Result *result);
  int32_t (*_Nonnull impose_run_to_memory)(
      const CImprintImpose_Job *job, CImprintImpose_Result *result,
      CImprintImpose_Output *output);
  void (*_Nonnull impose_free)(CImprintImpose_Output *output);
} CImprintEngines;

/// The library's one export: its table (the CImprintDocumentEngines target).
const CImprintEngines *ImprintDocumentEngines_table(void);

/// The table: the one linked into this program if there is one, else the library's, loaded
/// once (thread-safe) from `IMPRINT_ENGINES` (a file), else `libImprintDocumentEngines.so`
/// beside the executable, else in `../lib/imprint` from the executable's folder. NULL when none
/// loads; `CImprintEngines_error` then says why.
const CImprintEngines *CImprintEngines_get(void);

/// Why `CImprintEngines_get` returned NULL (the paths tried and dlopen's words), or "".
const char *CImprintEngines_error(void);

/// Whether `CImprintEngines_get` returned NULL for want of memory (mapping a library failed with
/// ENOMEM: a worker's address-space limit), not for a missing or foreign library.
int CImprintEngines_out_of_memory(void);

#pragma clang diagnostic pop

#ifdef __cplusplus
}
#endif

#endif
