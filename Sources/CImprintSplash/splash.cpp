// SPDX-License-Identifier: Apache-2.0
// CImprintSplash: poppler's Splash output device (pdftoppm's renderer) behind a C header.
//
// Written against poppler's own classes (PDFDoc, SplashOutputDev; Debian's
// libpoppler-private-dev) rather than poppler-cpp's page_renderer, which builds a new output
// device for every page: its font engine and glyph cache were thrown away after each page, so
// every page of a long document loaded its fonts into FreeType and rasterised its glyphs again
// (311 pages of gnuplot.pdf at 256 px: 1.93 s of CPU with a device a page, 0.91 s with one a
// document). The settings are page_renderer's (poppler 22.12, cpp/poppler-page-renderer.cpp),
// so the pixels are the same.

#include "splash.h"

#include <poppler/ErrorCodes.h>
#include <poppler/Error.h>
#include <poppler/GlobalParams.h>
#include <poppler/PDFDoc.h>
#include <poppler/SplashOutputDev.h>
#include <poppler/Stream.h>
#include <poppler/goo/GooString.h>
#include <poppler/splash/SplashBitmap.h>

#include <climits>
#include <cstring>
#include <memory>
#include <new>
#include <optional>

namespace {
// poppler prints a hostile file's diagnostics to stderr; they are noise to Imprint's callers
// (poppler's verdict comes back as a status), so they are dropped.
void quiet(ErrorCategory, Goffset, const char *) {}
}  // namespace

struct CImprintSplash_Document {
  // Holds poppler's globalParams while the document lives (counted: poppler-glib holds them
  // too), as poppler-cpp's documents do.
  GlobalParamsIniter params{quiet};
  std::unique_ptr<PDFDoc> document;
  // One output device for every page drawn: its fonts and glyphs stay cached between pages.
  std::unique_ptr<SplashOutputDev> device;
};

extern "C" CImprintSplash_Document *CImprintSplash_open(
    const unsigned char *bytes, size_t length, const char *password, int *status) {
  *status = CImprintSplash_UNREADABLE;
  if (length > INT_MAX) return nullptr;
  try {
    auto opened = std::make_unique<CImprintSplash_Document>();
    std::optional<GooString> secret;
    if (password) secret.emplace(password);
    // MemStream reads the caller's bytes in place (they outlive the document); the PDFDoc
    // owns and deletes the stream.
    auto *stream = new MemStream(
        reinterpret_cast<const char *>(bytes), 0, static_cast<Goffset>(length), Object(objNull));
    opened->document = std::make_unique<PDFDoc>(stream, secret, secret);
    if (!opened->document->isOk()) return nullptr;
    *status = CImprintSplash_OK;
    return opened.release();
  } catch (std::bad_alloc &) {
    *status = CImprintSplash_NO_MEMORY;
    return nullptr;
  } catch (...) {
    return nullptr;
  }
}

extern "C" void CImprintSplash_close(CImprintSplash_Document *document) { delete document; }

extern "C" int CImprintSplash_render(
    CImprintSplash_Document *document, int index, double xdpi, double ydpi, int width,
    int height, uint32_t *pixels, size_t stride) {
  if (!document || index < 0 || index >= document->document->getNumPages()) {
    return CImprintSplash_NO_PAGE;
  }
  try {
    if (!document->device) {
      // page_renderer's device: XBGR8 (0xXXRRGGBB words), rows padded to 4 bytes, top-down,
      // white paper, thin lines drawn as they are; text and vectors anti-aliased, no hinting.
      SplashColor paper = {0xFF, 0xFF, 0xFF, 0xFF};
      auto device = std::make_unique<SplashOutputDev>(
          splashModeXBGR8, 4, false, paper, true, splashThinLineDefault);
      device->setFontAntialias(true);
      device->setVectorAntialias(true);
      device->setFreeTypeHinting(false, false);
      device->startDoc(document->document.get());
      document->device = std::move(device);
    }
    // A slice of exactly width x height from the top-left corner: the page's own pixel size is
    // its box times the resolution, rounded by poppler, which may differ from the caller's by
    // one; the slice past the page is paper. Crop box, /Rotate applied, not printing (as a
    // viewer shows the annotations).
    document->document->displayPageSlice(
        document->device.get(), index + 1, xdpi, ydpi, 0, false, true, false, 0, 0, width,
        height);
    SplashBitmap *bitmap = document->device->getBitmap();
    if (!bitmap || bitmap->getMode() != splashModeXBGR8 || bitmap->getWidth() < 1 ||
        bitmap->getHeight() < 1 || !bitmap->getDataPtr()) {
      return CImprintSplash_FAILED;
    }
    const int rows = bitmap->getHeight() < height ? bitmap->getHeight() : height;
    const int columns = bitmap->getWidth() < width ? bitmap->getWidth() : width;
    const unsigned char *source = bitmap->getDataPtr();
    const size_t sourceStride = static_cast<size_t>(bitmap->getRowSize());
    for (int y = 0; y < height; ++y) {
      uint32_t *row = reinterpret_cast<uint32_t *>(reinterpret_cast<char *>(pixels) + y * stride);
      int x = 0;
      if (y < rows) {
        const uint32_t *from =
            reinterpret_cast<const uint32_t *>(source + static_cast<size_t>(y) * sourceStride);
        for (; x < columns; ++x) row[x] = from[x] | 0xFF000000u;
      }
      for (; x < width; ++x) row[x] = 0xFFFFFFFFu;
    }
    return CImprintSplash_OK;
  } catch (std::bad_alloc &) {
    return CImprintSplash_NO_MEMORY;
  } catch (...) {
    return CImprintSplash_FAILED;
  }
}
