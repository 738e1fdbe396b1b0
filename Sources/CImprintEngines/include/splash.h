// SPDX-License-Identifier: Apache-2.0
// CImprintSplash (libImprintDocumentEngines, splash.cpp): PDF pages rasterised by poppler's
// Splash backend (its SplashOutputDev, one a document), the backend pdftoppm uses. ImprintDocuments
// draws thumbnails with it, through the CImprintEngines table: poppler's cairo backend widens every
// stroke thinner than a pixel to one pixel, so dense hairline drawings came out washed out or dark;
// Splash draws them at their coverage.

#ifndef CIMPRINT_SPLASH_H
#define CIMPRINT_SPLASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A document opened for rendering (poppler's `PDFDoc` and its Splash output device).
typedef struct CImprintSplash_Document CImprintSplash_Document;

/// What a call ended with.
enum {
  CImprintSplash_OK = 0,
  /// poppler could not open the bytes (damaged, wrong password, larger than 2 GiB).
  CImprintSplash_UNREADABLE = 1,
  /// No such page.
  CImprintSplash_NO_PAGE = 2,
  /// Splash produced no image, or one of another size or format.
  CImprintSplash_FAILED = 3,
  /// An allocation failed (`std::bad_alloc`).
  CImprintSplash_NO_MEMORY = 4,
  /// poppler could not open the bytes without the right password (errEncrypted).
  CImprintSplash_ENCRYPTED = 5,
  /// poppler could not open the bytes: damaged beyond repair (errDamaged).
  CImprintSplash_DAMAGED = 6,
  /// poppler could not read the document catalog (errBadCatalog).
  CImprintSplash_BAD_CATALOG = 7,
};

/// Holds poppler's global parameters for the rest of the process. Each document holds them
/// while it lives, counted, and poppler makes them again (reading its data files, some
/// milliseconds) whenever the count rises from zero: once kept, they are made once a process,
/// and a worker forked after this call inherits them.
void CImprintSplash_keep_global_params(void);

/// A JPEG decoder that can decode at a half, a quarter or an eighth of the size, with
/// `CImprintShims_jpeg_decode`'s contract (layout 0: 4 bytes a pixel B G R X; 1: grey; flags 1,
/// strict: libjpeg's warnings are errors, so that a damaged JPEG is left to poppler, which draws
/// what it can read its own way). Handed in by ImprintDocuments from ImprintGraphics, libjpeg's
/// one owner.
typedef int (*CImprintSplash_JPEGDecode)(
    const uint8_t *data, size_t len, int layout, int scale_denom, int flags, uint8_t *pixels,
    size_t stride, size_t capacity, uint32_t *out_width, uint32_t *out_height, char *errbuf,
    size_t errbuf_len);

/// Opens the PDF in `bytes` (not copied: they must outlive the document) with `password`
/// (owner and user password alike, in Latin-1 and then as given, as poppler-glib does; NULL
/// for none). Sets `*status`: a document poppler refuses is `ENCRYPTED`, `DAMAGED`,
/// `BAD_CATALOG` or `UNREADABLE` (any other reason, as poppler-glib's "Failed to load").
/// `decode` (NULL for none) decodes a JPEG image the page draws at a half or less of its
/// pixels at that reduced size (libjpeg's DCT scaling, as MuPDF does) instead of decoding it
/// whole and scaling it down; only a plain one (one DCTDecode filter without parameters, grey
/// or RGB, 8 bits, no colour-key mask).
CImprintSplash_Document *CImprintSplash_open(
    const unsigned char *bytes, size_t length, const char *password,
    CImprintSplash_JPEGDecode decode, int *status);

/// Closes a document from `CImprintSplash_open` (NULL is ignored).
void CImprintSplash_close(CImprintSplash_Document *document);

/// The number of pages poppler reads (it trusts the page tree's `/Count`).
int CImprintSplash_page_count(CImprintSplash_Document *document);

/// Page `index`'s (0-based) size in points as displayed, as poppler_page_get_size gives it:
/// the crop box, its sides swapped when `/Rotate` is a quarter turn. `NO_PAGE` when poppler
/// has no such page.
int CImprintSplash_page_size(
    CImprintSplash_Document *document, int index, double *width, double *height);

/// Renders page `index` (0-based, its `/Rotate` applied, crop box, annotations as a viewer
/// shows them) at `xdpi` × `ydpi` on white paper, anti-aliased (vector and text; no hinting,
/// as pdftoppm), and writes its top-left `width` × `height` pixels to `pixels` as 32-bit
/// 0xFFRRGGBB words, `stride` bytes a row. Pixels the page does not cover stay white.
/// `*reducedImages` is set to the number of JPEG images drawn from a reduced decode.
int CImprintSplash_render(
    CImprintSplash_Document *document, int index, double xdpi, double ydpi, int width,
    int height, uint32_t *pixels, size_t stride, int *reducedImages);

/// How many fonts `document`'s pages have made (each font once a document, whatever page
/// names it), and how many pages were drawn with those fonts (the others, whose /Font
/// dictionary names a font directly, made their own as poppler does).
void CImprintSplash_font_counts(
    CImprintSplash_Document *document, int *fontsMade, int *pagesDrawn);

#ifdef __cplusplus
}
#endif

#endif
