// SPDX-License-Identifier: Apache-2.0
// CImprintImpose: n-up sheets with libqpdf's C++ API. Each placed page becomes a form XObject
// (QPDFPageObjectHelper::getFormXObjectForPage: its own content streams, fonts and images,
// never re-drawn) copied into a new PDF and drawn into its cell with one `cm`.

#include "impose.h"

#include <qpdf/Pipeline.hh>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFAcroFormDocumentHelper.hh>
#include <qpdf/QPDFExc.hh>
#include <qpdf/QPDFLogger.hh>
#include <qpdf/QPDFMatrix.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>
#include <qpdf/QPDFPageObjectHelper.hh>
#include <qpdf/QPDFWriter.hh>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// Writes everything to a descriptor, keeping errno of the first failure.
class DescriptorPipeline : public Pipeline {
 public:
  explicit DescriptorPipeline(int descriptor) : Pipeline("imprint output", nullptr), fd(descriptor) {}

  void write(unsigned char const *data, size_t length) override {
    while (length > 0) {
      ssize_t written = ::write(fd, data, length);
      if (written < 0) {
        if (errno == EINTR) continue;
        error = errno;
        throw std::runtime_error("write failed");
      }
      data += written;
      length -= static_cast<size_t>(written);
    }
  }

  void finish() override {}

  int error = 0;

 private:
  int fd;
};

/// Keeps everything written, in memory.
class MemoryPipeline : public Pipeline {
 public:
  MemoryPipeline() : Pipeline("imprint memory output", nullptr) {}

  void write(unsigned char const *data, size_t length) override {
    bytes.append(reinterpret_cast<const char *>(data), length);
  }

  void finish() override {}

  std::string bytes;
};

/// A number as PDF syntax, fixed to 1/10000 point and independent of any locale.
std::string number(double value) {
  long long scaled = std::llround(value * 10000.0);
  std::string sign = scaled < 0 ? "-" : "";
  unsigned long long magnitude = scaled < 0 ? 0ULL - static_cast<unsigned long long>(scaled)
                                            : static_cast<unsigned long long>(scaled);
  std::string text = sign + std::to_string(magnitude / 10000);
  unsigned long long fraction = magnitude % 10000;
  if (fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof digits, "%04llu", fraction);
    std::string tail(digits);
    while (!tail.empty() && tail.back() == '0') tail.pop_back();
    text += "." + tail;
  }
  return text == "-0" ? "0" : text;
}

void setMessage(CImprintImpose_Result *result, const std::string &text) {
  std::snprintf(result->message, sizeof result->message, "%s", text.c_str());
}

/// The box `form` covers: its /BBox mapped by its /Matrix.
QPDFObjectHandle::Rectangle formBox(QPDFObjectHandle form, bool &valid) {
  QPDFObjectHandle dict = form.getDict();
  QPDFObjectHandle bbox = dict.getKey("/BBox");
  valid = bbox.isRectangle();
  if (!valid) return QPDFObjectHandle::Rectangle();
  QPDFMatrix matrix;
  QPDFObjectHandle formMatrix = dict.getKey("/Matrix");
  if (formMatrix.isMatrix()) matrix = QPDFMatrix(formMatrix.getArrayAsMatrix());
  return matrix.transformRectangle(bbox.getArrayAsRectangle());
}

/// The `cm` that draws `form` (its /BBox mapped by its /Matrix) into the cell: rotated a
/// quarter turn counter-clockwise when its orientation differs from the cell's, scaled
/// uniformly to fit, centred. Returns false for an empty or non-finite box. (The cells are
/// ImprintCore's `SheetGrid`'s, whose words these are: sheet, cell, rotated.)
bool placement(QPDFObjectHandle form, double cellX, double cellY, double cellWidth,
               double cellHeight, std::string &cm) {
  bool valid = false;
  QPDFObjectHandle::Rectangle box = formBox(form, valid);
  if (!valid) return false;
  double width = box.urx - box.llx;
  double height = box.ury - box.lly;
  if (!std::isfinite(width) || !std::isfinite(height) || width <= 0 || height <= 0) return false;
  bool rotated = (width > height) != (cellWidth > cellHeight) && width != height &&
              cellWidth != cellHeight;
  double shownWidth = rotated ? height : width;
  double shownHeight = rotated ? width : height;
  double scale = std::min(cellWidth / shownWidth, cellHeight / shownHeight);
  if (!std::isfinite(scale) || scale <= 0) return false;
  double centreX = (box.llx + box.urx) / 2;
  double centreY = (box.lly + box.ury) / 2;
  double targetX = cellX + cellWidth / 2;
  double targetY = cellY + cellHeight / 2;
  double a, b, c, d, e, f;
  if (rotated) {
    // (x, y) -> (-(y - cy), x - cx) * scale + target: a quarter turn counter-clockwise.
    a = 0, b = scale, c = -scale, d = 0;
    e = targetX + scale * centreY;
    f = targetY - scale * centreX;
  } else {
    a = scale, b = 0, c = 0, d = scale;
    e = targetX - scale * centreX;
    f = targetY - scale * centreY;
  }
  cm = number(a) + " " + number(b) + " " + number(c) + " " + number(d) + " " + number(e) + " " +
       number(f) + " cm";
  return true;
}

QPDFObjectHandle newSheet(QPDF &out, double width, double height) {
  QPDFObjectHandle page = QPDFObjectHandle::newDictionary();
  page.replaceKey("/Type", QPDFObjectHandle::newName("/Page"));
  page.replaceKey("/MediaBox", QPDFObjectHandle::newFromRectangle(
                                   QPDFObjectHandle::Rectangle(0, 0, width, height)));
  page.replaceKey("/Resources", QPDFObjectHandle::newDictionary());
  return out.makeIndirectObject(page);
}

/// Keeps libqpdf from writing anything to stdout or stderr: its findings come back as statuses.
void silence(QPDF &in) {
  auto logger = QPDFLogger::create();
  logger->setInfo(logger->discard());
  logger->setWarn(logger->discard());
  logger->setError(logger->discard());
  in.setLogger(logger);
  in.setSuppressWarnings(true);
}

/// Runs `writer`; false when the output's descriptor failed (`writeError`, kept by the
/// pipeline, is then the result's `systemError`). Other failures are thrown.
bool write(QPDFWriter &writer, CImprintImpose_Result &result, const int &writeError) {
  try {
    writer.write();
  } catch (...) {
    if (writeError != 0) {
      result.systemError = writeError;
      return false;
    }
    throw;
  }
  return true;
}

int32_t impose(const CImprintImpose_Job &job, CImprintImpose_Result &result, Pipeline &output,
               int &writeError) {
  // Each page on a sheet of its own size: one cell, the sheet sized by the page below.
  if ((!job.ownSize && (job.cellCount < 1 || !job.cells)) || job.pageCount < 0 ||
      (job.pageCount > 0 && !job.pages) ||
      (!job.ownSize && (!(job.sheetWidth > 0) || !(job.sheetHeight > 0) ||
                        !std::isfinite(job.sheetWidth) || !std::isfinite(job.sheetHeight)))) {
    setMessage(&result, "the imposition job is not valid");
    return CImprintImpose_badJob;
  }
  QPDF in;
  silence(in);
  in.processMemoryFile("upload", reinterpret_cast<const char *>(job.bytes), job.length,
                       job.password);
  // Form fields and other annotations are not part of a page's content: draw their appearances
  // into the content first (a form XObject would leave them out).
  QPDFAcroFormDocumentHelper(in).generateAppearancesIfNeeded();
  QPDFPageDocumentHelper pages(in);
  pages.flattenAnnotations(an_print);
  std::vector<QPDFPageObjectHelper> all = pages.getAllPages();
  result.foundPages = static_cast<int32_t>(all.size());
  if (job.expectedPages >= 0 && static_cast<size_t>(job.expectedPages) != all.size()) {
    return CImprintImpose_pageCount;
  }

  QPDF out;
  silence(out);
  out.emptyPDF();
  QPDFPageDocumentHelper sheets(out);
  double sheetWidth = job.sheetWidth;
  double sheetHeight = job.sheetHeight;
  std::map<int32_t, QPDFObjectHandle> forms;  // input page -> form in `out`
  int32_t sides = 0;
  int32_t perSheet = job.ownSize ? 1 : job.cellCount;
  for (int32_t first = 0; first < job.pageCount; first += perSheet) {
    QPDFObjectHandle xobjects = QPDFObjectHandle::newDictionary();
    std::string content;
    std::vector<std::pair<std::string, std::string>> placed;  // name, cm
    for (int32_t cell = 0; cell < perSheet && first + cell < job.pageCount; ++cell) {
      int32_t pageNumber = job.pages[first + cell];
      if (pageNumber < 1 || static_cast<size_t>(pageNumber) > all.size()) {
        result.page = pageNumber;
        setMessage(&result, "page " + std::to_string(pageNumber) + " is not in the document");
        return CImprintImpose_badJob;
      }
      auto found = forms.find(pageNumber);
      if (found == forms.end()) {
        QPDFObjectHandle form =
            all[static_cast<size_t>(pageNumber - 1)].getFormXObjectForPage(true);
        found = forms.emplace(pageNumber, out.copyForeignObject(form)).first;
      }
      double cellX = 0, cellY = 0, cellWidth = 0, cellHeight = 0;
      if (job.ownSize) {
        bool valid = false;
        QPDFObjectHandle::Rectangle box = formBox(found->second, valid);
        sheetWidth = box.urx - box.llx;
        sheetHeight = box.ury - box.lly;
        cellWidth = sheetWidth;
        cellHeight = sheetHeight;
        if (!valid || !std::isfinite(sheetWidth) || !std::isfinite(sheetHeight) ||
            sheetWidth <= 0 || sheetHeight <= 0) {
          result.page = pageNumber;
          return CImprintImpose_emptyPage;
        }
      } else {
        const double *box = job.cells + 4 * cell;
        cellX = box[0];
        cellY = box[1];
        cellWidth = box[2];
        cellHeight = box[3];
      }
      std::string cm;
      if (!placement(found->second, cellX, cellY, cellWidth, cellHeight, cm)) {
        result.page = pageNumber;
        return CImprintImpose_emptyPage;
      }
      std::string name = "/Fx" + std::to_string(cell + 1);
      xobjects.replaceKey(name, found->second);
      content += "q " + cm + " " + name + " Do Q\n";
    }
    QPDFObjectHandle sheet = newSheet(out, sheetWidth, sheetHeight);
    sheet.getKey("/Resources").replaceKey("/XObject", xobjects);
    sheet.replaceKey("/Contents", QPDFObjectHandle::newStream(&out, content));
    sheets.addPage(QPDFPageObjectHelper(sheet), false);
    ++sides;
  }
  if (job.blankBack && !job.ownSize) {
    QPDFObjectHandle blank = newSheet(out, sheetWidth, sheetHeight);
    blank.replaceKey("/Contents", QPDFObjectHandle::newStream(&out, ""));
    sheets.addPage(QPDFPageObjectHelper(blank), false);
    ++sides;
  }

  QPDFWriter writer(out);
  writer.setOutputPipeline(&output);
  writer.setMinimumPDFVersion(in.getPDFVersion(), in.getExtensionLevel());
  // Streams are copied as they are (images byte for byte); only new, unfiltered ones are
  // compressed. No /CreationDate, and an /ID from the content: the same input, the same bytes.
  writer.setDecodeLevel(qpdf_dl_none);
  writer.setCompressStreams(true);
  writer.setDeterministicID(true);
  if (!write(writer, result, writeError)) return CImprintImpose_writeFailed;
  result.sheetSides = sides;
  return CImprintImpose_ok;
}

/// Writes the PDF in `bytes` again without its dates and with an /ID made from its content, so
/// that a converter that stamps the time (LibreOffice) gives the same bytes for the same input.
int32_t normalize(const unsigned char *bytes, size_t length, CImprintImpose_Result &result,
                  Pipeline &output, int &writeError) {
  QPDF in;
  silence(in);
  in.processMemoryFile("converted", reinterpret_cast<const char *>(bytes), length);
  result.foundPages = static_cast<int32_t>(QPDFPageDocumentHelper(in).getAllPages().size());
  // The converter's /ID is random (qpdf would keep its first half), and LibreOffice's own
  // trailer key /DocChecksum changes from run to run for the same pages.
  in.getTrailer().removeKey("/ID");
  in.getTrailer().removeKey("/DocChecksum");
  QPDFObjectHandle info = in.getTrailer().getKey("/Info");
  if (info.isDictionary()) {
    info.removeKey("/CreationDate");
    info.removeKey("/ModDate");
  }
  QPDFWriter writer(in);
  writer.setOutputPipeline(&output);
  writer.setDecodeLevel(qpdf_dl_none);
  writer.setDeterministicID(true);
  if (!write(writer, result, writeError)) return CImprintImpose_writeFailed;
  result.sheetSides = result.foundPages;
  return CImprintImpose_ok;
}

/// Runs `body`, turning every C++ exception into the result's status and message.
template <typename Body>
int32_t guarded(CImprintImpose_Result *result, Body body) {
  std::memset(result, 0, sizeof *result);
  try {
    result->status = body();
  } catch (std::bad_alloc &) {
    result->status = CImprintImpose_outOfMemory;
    setMessage(result, "out of memory");
  } catch (QPDFExc &error) {
    result->status =
        error.getErrorCode() == qpdf_e_password ? CImprintImpose_password : CImprintImpose_damaged;
    setMessage(result, error.getMessageDetail());
  } catch (std::exception &error) {
    result->status = CImprintImpose_damaged;
    setMessage(result, error.what());
  } catch (...) {
    result->status = CImprintImpose_damaged;
    setMessage(result, "unknown error");
  }
  return result->status;
}

}  // namespace

extern "C" int32_t CImprintImpose_run(const CImprintImpose_Job *job,
                                      CImprintImpose_Result *result) {
  return guarded(result, [&] {
    DescriptorPipeline pipeline(job->descriptor);
    // A write error is kept by the pipeline; impose reads it through this reference.
    return impose(*job, *result, pipeline, pipeline.error);
  });
}

extern "C" int32_t CImprintImpose_normalize(const unsigned char *bytes, size_t length,
                                            int descriptor, CImprintImpose_Result *result) {
  return guarded(result, [&] {
    DescriptorPipeline pipeline(descriptor);
    return normalize(bytes, length, *result, pipeline, pipeline.error);
  });
}

extern "C" int32_t CImprintImpose_runToMemory(const CImprintImpose_Job *job,
                                              CImprintImpose_Result *result,
                                              CImprintImpose_Output *output) {
  *output = CImprintImpose_Output{nullptr, 0, nullptr};
  return guarded(result, [&] {
    auto pipeline = std::make_unique<MemoryPipeline>();
    int noWriteError = 0;
    int32_t status = impose(*job, *result, *pipeline, noWriteError);
    if (status != CImprintImpose_ok) return status;
    // Handed over as they are, not copied: the caller copies them once and frees them.
    output->bytes = reinterpret_cast<const unsigned char *>(pipeline->bytes.data());
    output->length = pipeline->bytes.size();
    output->owner = pipeline.release();
    return status;
  });
}

extern "C" void CImprintImpose_free(CImprintImpose_Output *output) {
  delete static_cast<MemoryPipeline *>(output->owner);
  *output = CImprintImpose_Output{nullptr, 0, nullptr};
}
