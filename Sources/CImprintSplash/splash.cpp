// SPDX-License-Identifier: Apache-2.0
// CImprintSplash: poppler-cpp's page_renderer (Splash) behind a C header.

#include "splash.h"

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-image.h>
#include <poppler/cpp/poppler-page-renderer.h>
#include <poppler/cpp/poppler-page.h>

#include <climits>
#include <cstring>
#include <memory>
#include <new>
#include <string>

struct CImprintSplash_Document {
  std::unique_ptr<poppler::document> document;
};

namespace {
// poppler-cpp installs a global error callback printing to stderr when it loads a document;
// the diagnostics of a hostile file are noise to Imprint's callers (poppler's verdict comes
// back as a status), so they are dropped.
void quiet(const std::string &, void *) {}
}  // namespace

extern "C" CImprintSplash_Document *CImprintSplash_open(
    const unsigned char *bytes, size_t length, const char *password, int *status) {
  *status = CImprintSplash_UNREADABLE;
  if (length > INT_MAX) return nullptr;
  try {
    poppler::set_debug_error_function(quiet, nullptr);
    std::string secret = password ? password : "";
    std::unique_ptr<poppler::document> document(poppler::document::load_from_raw_data(
        reinterpret_cast<const char *>(bytes), static_cast<int>(length), secret, secret));
    if (!document || document->is_locked()) return nullptr;
    auto *opened = new CImprintSplash_Document{std::move(document)};
    *status = CImprintSplash_OK;
    return opened;
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
  if (!document || index < 0 || index >= document->document->pages()) {
    return CImprintSplash_NO_PAGE;
  }
  try {
    std::unique_ptr<poppler::page> page(document->document->create_page(index));
    if (!page) return CImprintSplash_NO_PAGE;
    poppler::page_renderer renderer;
    renderer.set_paper_color(0xFFFFFFFF);
    renderer.set_image_format(poppler::image::format_argb32);
    renderer.set_render_hints(
        poppler::page_renderer::antialiasing | poppler::page_renderer::text_antialiasing);
    // A slice of exactly width x height from the top-left corner: the page's own pixel size is
    // its box times the resolution, rounded by poppler, which may differ from the caller's by
    // one; the slice past the page is paper.
    poppler::image image =
        renderer.render_page(page.get(), xdpi, ydpi, 0, 0, width, height, poppler::rotate_0);
    if (!image.is_valid() || image.format() != poppler::image::format_argb32 ||
        image.width() < 1 || image.height() < 1) {
      return CImprintSplash_FAILED;
    }
    const int rows = image.height() < height ? image.height() : height;
    const int columns = image.width() < width ? image.width() : width;
    const char *source = image.const_data();
    for (int y = 0; y < height; ++y) {
      uint32_t *row = reinterpret_cast<uint32_t *>(reinterpret_cast<char *>(pixels) + y * stride);
      int x = 0;
      if (y < rows) {
        const uint32_t *from =
            reinterpret_cast<const uint32_t *>(source + static_cast<size_t>(y) * image.bytes_per_row());
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
