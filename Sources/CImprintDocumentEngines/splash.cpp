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

#include <poppler/Annot.h>
#include <poppler/Error.h>
#include <poppler/ErrorCodes.h>
#include <poppler/Gfx.h>
#include <poppler/GfxFont.h>
#include <poppler/GfxState.h>
#include <poppler/GlobalParams.h>
#include <poppler/PDFDoc.h>
#include <poppler/Page.h>
#include <poppler/SplashOutputDev.h>
#include <poppler/Stream.h>
#include <poppler/goo/GooString.h>
#include <poppler/splash/SplashBitmap.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
// poppler prints a hostile file's diagnostics to stderr; they are noise to Imprint's callers
// (poppler's verdict comes back as a status), so they are dropped.
void quiet(ErrorCategory, Goffset, const char *) {}
}  // namespace

namespace {
/// What poppler's DCTStream and libjpeg decide a JPEG's colours from, read from its markers up
/// to its frame header.
struct JPEGHeader {
  int width = 0, height = 0, components = 0;
  bool jfif = false, adobe = false;

  /// Reads `bytes`' markers up to the first frame header; false for anything unexpected.
  bool read(const std::string &bytes) {
    const auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
    const size_t n = bytes.size();
    if (n < 4 || b[0] != 0xFF || b[1] != 0xD8) return false;
    size_t i = 2;
    while (i + 4 <= n) {
      if (b[i] != 0xFF) return false;
      const unsigned char marker = b[i + 1];
      if (marker == 0xFF) {  // a fill byte
        ++i;
        continue;
      }
      const size_t length = (size_t(b[i + 2]) << 8) | b[i + 3];
      if (length < 2 || i + 2 + length > n) return false;
      const unsigned char *segment = b + i + 4;
      const size_t size = length - 2;
      if (marker == 0xE0 && size >= 5 && std::memcmp(segment, "JFIF\0", 5) == 0) jfif = true;
      if (marker == 0xEE && size >= 5 && std::memcmp(segment, "Adobe", 5) == 0) adobe = true;
      if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
          marker != 0xCC) {
        if (size < 6) return false;
        height = (segment[1] << 8) | segment[2];
        width = (segment[3] << 8) | segment[4];
        components = segment[5];
        return true;
      }
      if (marker == 0xDA || marker == 0xD9) return false;
      i += 2 + length;
    }
    return false;
  }
};

/// Whether `name` is DCTDecode's name or its abbreviation.
bool isDCT(const Object &name) { return name.isName("DCTDecode") || name.isName("DCT"); }

/// The Splash device of a thumbnail: as poppler's, but a large JPEG image drawn much smaller
/// is decoded at a half, a quarter or an eighth of its size (libjpeg scales in the DCT domain)
/// and handed to Splash at that size, where poppler decodes every pixel and Splash averages
/// them down (a 4032 x 2268 phone photo on a page cost 0.1 s of CPU for a 256-px thumbnail).
/// The reduced image still has as many pixels as the device area it covers, or more.
class ThumbnailDevice final : public SplashOutputDev {
 public:
  ThumbnailDevice(SplashColorPtr paper, CImprintSplash_JPEGDecode decode)
      : SplashOutputDev(splashModeXBGR8, 4, false, paper, true, splashThinLineDefault),
        decode(decode) {}

  /// Images drawn reduced since the count was last reset.
  int reducedImages = 0;

  void drawImage(GfxState *state, Object *ref, Stream *str, int width, int height,
                 GfxImageColorMap *colorMap, bool interpolate, const int *maskColors,
                 bool inlineImg) override {
    if (!(decode && !maskColors && !inlineImg &&
          drawReduced(state, ref, str, width, height, colorMap, interpolate))) {
      SplashOutputDev::drawImage(
          state, ref, str, width, height, colorMap, interpolate, maskColors, inlineImg);
    }
  }

 private:
  CImprintSplash_JPEGDecode decode;

  /// Draws `str` reduced when it is a plain JPEG drawn at half its size or less; false (having
  /// drawn nothing) otherwise, or when libjpeg cannot decode it, so that poppler draws it.
  bool drawReduced(GfxState *state, Object *ref, Stream *str, int width, int height,
                   GfxImageColorMap *colorMap, bool interpolate) {
    if (str->getKind() != strDCT || colorMap->getBits() != 8) return false;
    const int components = colorMap->getNumPixelComps();
    GfxColorSpace *space = colorMap->getColorSpace();
    if ((components != 1 && components != 3) || !space || space->getMode() == csIndexed) {
      return false;
    }
    // The device pixels the image's unit square covers, along each of its axes.
    const double *ctm = state->getCTM();
    const double across = std::hypot(ctm[0], ctm[1]), down = std::hypot(ctm[2], ctm[3]);
    if (!(across > 0 && down > 0) || !std::isfinite(across) || !std::isfinite(down)) {
      return false;
    }
    // Twice the device pixels or more, so that Splash still averages two or more pixels into
    // each (from fewer, a box filter of a non-integer ratio shows its steps).
    int denominator = 8;
    while (denominator > 1 && ((width + denominator - 1) / denominator < 2 * std::ceil(across) ||
                               (height + denominator - 1) / denominator < 2 * std::ceil(down))) {
      denominator /= 2;
    }
    if (denominator == 1) return false;
    // One DCTDecode filter without parameters (poppler reads /ColorTransform there) over the
    // file's own bytes.
    Dict *dict = str->getDict();
    Stream *source = str->getNextStream();
    if (!dict || !source || source->getBaseStream() != source) return false;
    Object filter = dict->lookup("Filter");
    if (filter.isNull()) filter = dict->lookup("F");
    const bool oneDCT =
        isDCT(filter) || (filter.isArray() && filter.arrayGetLength() == 1 &&
                          isDCT(filter.arrayGet(0)));
    if (!oneDCT || !dict->lookup("DecodeParms").isNull() || !dict->lookup("DP").isNull()) {
      return false;
    }
    std::string bytes;
    source->reset();
    try {
      source->fillString(bytes);
    } catch (std::bad_alloc &) {
      source->close();
      return false;
    }
    source->close();
    // poppler and libjpeg take the same colour transform from the markers, except when a file
    // has both JFIF's and Adobe's; and the frame must be the size the image dictionary says.
    JPEGHeader header;
    if (!header.read(bytes) || header.components != components || header.width != width ||
        header.height != height || (header.jfif && header.adobe)) {
      return false;
    }
    const int columns = (width + denominator - 1) / denominator;
    const int rows = (height + denominator - 1) / denominator;
    const size_t stride = size_t(columns) * (components == 1 ? 1 : 4);
    // The reduced image is held whole (poppler streams its rows): where that is more memory
    // than the worker has, poppler draws it instead.
    std::vector<uint8_t> pixels;
    try {
      pixels.resize(stride * size_t(rows));
    } catch (std::bad_alloc &) {
      return false;
    }
    uint32_t decodedWidth = 0, decodedHeight = 0;
    char message[256];
    // Strict (flags 1): a JPEG libjpeg warns about (cut short, corrupt data) is poppler's to
    // draw, as before; libjpeg would fill what is missing its own way. (A progressive one at
    // 1/8 is read from its DC scans: a fault in an AC scan it skips is not seen.)
    if (decode(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
               components == 1 ? 1 : 0, denominator, 1, pixels.data(), stride, pixels.size(),
               &decodedWidth, &decodedHeight, message, sizeof message) != 0 ||
        decodedWidth != uint32_t(columns) || decodedHeight != uint32_t(rows)) {
      return false;
    }
    if (components == 3) {  // B G R X to R G B, in place (each pixel moves left)
      for (size_t p = 0, count = size_t(columns) * size_t(rows); p < count; ++p) {
        const uint8_t b = pixels[4 * p], g = pixels[4 * p + 1], r = pixels[4 * p + 2];
        pixels[3 * p] = r;
        pixels[3 * p + 1] = g;
        pixels[3 * p + 2] = b;
      }
    }
    MemStream reduced(reinterpret_cast<const char *>(pixels.data()), 0,
                      Goffset(size_t(columns) * size_t(rows) * size_t(components)),
                      Object(objNull));
    SplashOutputDev::drawImage(
        state, ref, &reduced, columns, rows, colorMap, interpolate, nullptr, false);
    ++reducedImages;
    return true;
  }
};
}  // namespace

namespace {
// Three private members of poppler's classes, reached through explicit template instantiation
// (which, by the C++ standard, checks no access): the resources a Gfx draws a page with, their
// fonts, and the fonts' list. Written against Debian 12's poppler 22.12; a poppler whose members
// differ does not compile here, rather than misbehaving.
template <typename Tag, typename Tag::type Member>
struct Reach {
  friend typename Tag::type reach(Tag) { return Member; }
};
struct GfxResourcesMember {
  using type = GfxResources *Gfx::*;
  friend type reach(GfxResourcesMember);
};
template struct Reach<GfxResourcesMember, &Gfx::res>;
struct FontDictMember {
  using type = GfxFontDict *GfxResources::*;
  friend type reach(FontDictMember);
};
template struct Reach<FontDictMember, &GfxResources::fonts>;
struct FontListMember {
  using type = std::vector<std::shared_ptr<GfxFont>> GfxFontDict::*;
  friend type reach(FontListMember);
};
template struct Reach<FontListMember, &GfxFontDict::fonts>;

/// The fonts of a document's pages, made once a document.
///
/// poppler makes every font of a page's /Font resources again for each page it draws (its
/// GfxFontDict), and a Type 1 font's encoding is read from its embedded file, inflated by
/// poppler's own inflater: on a long manual, a quarter of the CPU of drawing every page (311
/// pages of gnuplot.pdf). A font is the same object whatever page names it (poppler makes it
/// from the font's reference, its resource name and its dictionary alone), so pages share
/// them here, as PDFium's and MuPDF's documents do.
class FontCache {
 public:
  /// The fonts of `resources`' /Font dictionary, in its order, made or found; nullopt when a
  /// font there is not an indirect reference (poppler then numbers it by its place in the
  /// dictionary) or there is no /Font dictionary: the page is drawn as poppler draws it.
  std::optional<std::vector<std::shared_ptr<GfxFont>>> fonts(Dict *resources, XRef *xref) {
    Object fontDict = resources->lookup("Font");
    if (!fontDict.isDict()) return std::nullopt;
    Dict *dict = fontDict.getDict();
    std::vector<std::shared_ptr<GfxFont>> fonts;
    fonts.reserve(dict->getLength());
    for (int i = 0; i < dict->getLength(); ++i) {
      const Object &entry = dict->getValNF(i);
      if (!entry.isRef()) return std::nullopt;
      Key key{entry.getRef(), dict->getKey(i)};
      auto found = made.find(key);
      if (found == made.end()) {
        // A bound on what is kept (a hostile file may name thousands of fonts).
        if (made.size() >= 1024) made.clear();
        // As GfxFontDict makes it: a font poppler cannot use is no font (nullptr).
        std::shared_ptr<GfxFont> font;
        Object object = entry.fetch(xref);
        if (object.isDict()) {
          font = GfxFont::makeFont(xref, key.tag.c_str(), key.ref, object.getDict());
          if (font && !font->isOk()) font.reset();
        }
        found = made.emplace(std::move(key), std::move(font)).first;
        ++fontsMade;
      }
      fonts.push_back(found->second);
    }
    return fonts;
  }

  /// How many fonts were made, and pages drawn with fonts from here.
  int fontsMade = 0, pagesDrawn = 0;

 private:
  struct Key {
    Ref ref;
    std::string tag;
    bool operator<(const Key &other) const {
      return ref < other.ref || (ref == other.ref && tag < other.tag);
    }
  };
  std::map<Key, std::shared_ptr<GfxFont>> made;
};
}  // namespace

struct CImprintSplash_Document {
  // Holds poppler's globalParams while the document lives (counted: poppler-glib holds them
  // too), as poppler-cpp's documents do.
  GlobalParamsIniter params{quiet};
  std::unique_ptr<PDFDoc> document;
  // One output device for every page drawn: its fonts and glyphs stay cached between pages.
  std::unique_ptr<ThumbnailDevice> device;
  // The pages' fonts (destroyed before the document they were made from).
  FontCache fonts;
};

namespace {
/// Draws `page` as PDFDoc::displayPageSlice does (rotation 0, the crop box, not printing, the
/// slice `width` x `height` from the top-left corner), its fonts from `document`'s cache;
/// false, having drawn nothing, when the cache cannot give them (`FontCache::fonts`).
bool displayWithKeptFonts(CImprintSplash_Document *document, Page *page, double xdpi,
                          double ydpi, int width, int height) {
  Dict *resources = page->getResourceDict();
  XRef *xref = document->document->getXRef();
  if (!resources) return false;
  auto fonts = document->fonts.fonts(resources, xref);
  if (!fonts) return false;
  OutputDev *out = document->device.get();
  if (!out->checkPageSlice(page, xdpi, ydpi, 0, false, true, 0, 0, width, height, false)) {
    return true;
  }
  // Page::createGfx's box and clip, for resources whose /Font dictionary is empty: the Gfx
  // makes no font (and an empty GfxFontDict: its constructor is not exported).
  int rotate = page->getRotate();
  if (rotate >= 360) {
    rotate -= 360;
  } else if (rotate < 0) {
    rotate += 360;
  }
  PDFRectangle box;
  bool crop = true;
  page->makeBox(xdpi, ydpi, rotate, false, out->upsideDown(), 0, 0, width, height, &box, &crop);
  const PDFRectangle *cropBox = page->getCropBox();
  if (!crop) crop = (box == *cropBox) && out->needClipToCropBox();
  Object noFonts(resources->copy(xref));
  noFonts.dictSet("Font", Object(new Dict(xref)));
  auto gfx = std::make_unique<Gfx>(
      document->document.get(), out, page->getNum(), noFonts.getDict(), xdpi, ydpi, &box,
      crop ? cropBox : nullptr, rotate, nullptr, nullptr, xref);
  // The page's fonts, in the list of the empty GfxFontDict, as it would have made them.
  GfxResources *pageResources = (*gfx).*reach(GfxResourcesMember());
  GfxFontDict *fontDict = (*pageResources).*reach(FontDictMember());
  if (!fontDict) throw std::logic_error("poppler made no font dictionary");
  (*fontDict).*reach(FontListMember()) = std::move(*fonts);
  // Page::displaySlice's drawing: the contents, then the annotations.
  Object contents = page->getContents();
  if (!contents.isNull()) {
    gfx->saveState();
    gfx->display(&contents);
    gfx->restoreState();
  } else {
    out->dump();
  }
  Annots *annots = page->getAnnots();
  if (annots && !annots->getAnnots().empty()) {
    for (Annot *annot : annots->getAnnots()) annot->draw(gfx.get(), false);
    out->dump();
  }
  ++document->fonts.pagesDrawn;
  return true;
}
}  // namespace

extern "C" void CImprintSplash_keep_global_params(void) {
  // Made once, never deleted: the count never falls to zero again.
  static GlobalParamsIniter *const kept = new GlobalParamsIniter(quiet);
  (void)kept;
}

namespace {
/// `password` (UTF-8) in Latin-1, as poppler-glib's poppler_password_to_latin1 makes it with
/// g_convert: empty when a character is past U+00FF or the text is not UTF-8.
std::string latin1(const char *password) {
  std::string out;
  const auto *p = reinterpret_cast<const unsigned char *>(password);
  while (*p) {
    if (*p < 0x80) {
      out += static_cast<char>(*p++);
    } else if ((*p == 0xC2 || *p == 0xC3) && (p[1] & 0xC0) == 0x80) {
      out += static_cast<char>(((*p & 0x03) << 6) | (p[1] & 0x3F));
      p += 2;
    } else {
      return std::string();
    }
  }
  return out;
}

/// The status poppler-glib's _poppler_document_new_from_pdfdoc gives a document that is not
/// ok, from its error code.
int openFailure(int code) {
  switch (code) {
  case errEncrypted: return CImprintSplash_ENCRYPTED;
  case errDamaged: return CImprintSplash_DAMAGED;
  case errBadCatalog: return CImprintSplash_BAD_CATALOG;
  default: return CImprintSplash_UNREADABLE;
  }
}
}  // namespace

extern "C" CImprintSplash_Document *CImprintSplash_open(
    const unsigned char *bytes, size_t length, const char *password,
    CImprintSplash_JPEGDecode decode, int *status) {
  *status = CImprintSplash_UNREADABLE;
  if (length > INT_MAX) return nullptr;
  try {
    auto opened = std::make_unique<CImprintSplash_Document>();
    // MemStream reads the caller's bytes in place (they outlive the document); the PDFDoc
    // owns and deletes the stream.
    auto open = [&](const std::optional<GooString> &secret) {
      auto *stream = new MemStream(
          reinterpret_cast<const char *>(bytes), 0, static_cast<Goffset>(length),
          Object(objNull));
      opened->document = std::make_unique<PDFDoc>(stream, secret, secret);
    };
    // As poppler-glib opens it: the password in Latin-1 first, then, if that is refused, as
    // given (UTF-8).
    std::optional<GooString> secret;
    if (password) secret.emplace(latin1(password));
    open(secret);
    if (!opened->document->isOk() && opened->document->getErrorCode() == errEncrypted &&
        password) {
      secret.emplace(password);
      open(secret);
    }
    if (!opened->document->isOk()) {
      *status = openFailure(opened->document->getErrorCode());
      return nullptr;
    }
    // page_renderer's device: XBGR8 (0xXXRRGGBB words), rows padded to 4 bytes, top-down,
    // white paper, thin lines drawn as they are; text and vectors anti-aliased, no hinting.
    SplashColor paper = {0xFF, 0xFF, 0xFF, 0xFF};
    opened->device = std::make_unique<ThumbnailDevice>(paper, decode);
    opened->device->setFontAntialias(true);
    opened->device->setVectorAntialias(true);
    opened->device->setFreeTypeHinting(false, false);
    opened->device->startDoc(opened->document.get());
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

extern "C" int CImprintSplash_page_count(CImprintSplash_Document *document) {
  if (!document) return 0;
  try {
    return document->document->getNumPages();
  } catch (...) {
    // No exception may cross into C (an allocation failure reading the catalog): no pages.
    return 0;
  }
}

extern "C" int CImprintSplash_page_size(
    CImprintSplash_Document *document, int index, double *width, double *height) {
  *width = 0;
  *height = 0;
  if (!document || index < 0 || index >= document->document->getNumPages()) {
    return CImprintSplash_NO_PAGE;
  }
  try {
    Page *page = document->document->getPage(index + 1);
    if (!page) return CImprintSplash_NO_PAGE;
    // poppler_page_get_size's: the crop box, its sides swapped for a quarter turn.
    const int rotate = page->getRotate();
    const bool turned = rotate == 90 || rotate == 270;
    *width = turned ? page->getCropHeight() : page->getCropWidth();
    *height = turned ? page->getCropWidth() : page->getCropHeight();
    return CImprintSplash_OK;
  } catch (std::bad_alloc &) {
    return CImprintSplash_NO_MEMORY;
  } catch (...) {
    return CImprintSplash_FAILED;
  }
}

extern "C" int CImprintSplash_render(
    CImprintSplash_Document *document, int index, double xdpi, double ydpi, int width,
    int height, uint32_t *pixels, size_t stride, int *reducedImages) {
  *reducedImages = 0;
  if (!document || index < 0 || index >= document->document->getNumPages()) {
    return CImprintSplash_NO_PAGE;
  }
  try {
    // A slice of exactly width x height from the top-left corner: the page's own pixel size is
    // its box times the resolution, rounded by poppler, which may differ from the caller's by
    // one; the slice past the page is paper. Crop box, /Rotate applied, not printing (as a
    // viewer shows the annotations).
    document->device->reducedImages = 0;
    Page *page = document->document->getPage(index + 1);
    if (!page) return CImprintSplash_FAILED;
    if (!displayWithKeptFonts(document, page, xdpi, ydpi, width, height)) {
      document->document->displayPageSlice(
          document->device.get(), index + 1, xdpi, ydpi, 0, false, true, false, 0, 0, width,
          height);
    }
    *reducedImages = document->device->reducedImages;
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

extern "C" void CImprintSplash_font_counts(
    CImprintSplash_Document *document, int *fontsMade, int *pagesDrawn) {
  *fontsMade = document ? document->fonts.fontsMade : 0;
  *pagesDrawn = document ? document->fonts.pagesDrawn : 0;
}
