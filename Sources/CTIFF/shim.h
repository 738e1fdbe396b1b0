// libtiff's declarations only (module.modulemap links nothing): ImprintGraphics loads libtiff
// with dlopen the first time a TIFF image is read (ImprintGraphics/TIFFDecoder.swift says why),
// and calls it through a table of these function types.
#include <tiffio.h>

typedef __typeof__(&TIFFClientOpenExt) ImprintTIFF_TIFFClientOpenExt;
typedef __typeof__(&TIFFClose) ImprintTIFF_TIFFClose;
typedef __typeof__(&TIFFOpenOptionsAlloc) ImprintTIFF_TIFFOpenOptionsAlloc;
typedef __typeof__(&TIFFOpenOptionsFree) ImprintTIFF_TIFFOpenOptionsFree;
typedef __typeof__(&TIFFOpenOptionsSetErrorHandlerExtR) ImprintTIFF_TIFFOpenOptionsSetErrorHandlerExtR;
typedef __typeof__(&TIFFOpenOptionsSetMaxSingleMemAlloc) ImprintTIFF_TIFFOpenOptionsSetMaxSingleMemAlloc;
typedef __typeof__(&TIFFOpenOptionsSetWarningHandlerExtR) ImprintTIFF_TIFFOpenOptionsSetWarningHandlerExtR;
typedef __typeof__(&TIFFRGBAImageOK) ImprintTIFF_TIFFRGBAImageOK;
typedef __typeof__(&TIFFReadDirectory) ImprintTIFF_TIFFReadDirectory;
typedef __typeof__(&TIFFReadRGBAImageOriented) ImprintTIFF_TIFFReadRGBAImageOriented;
typedef __typeof__(&TIFFSetDirectory) ImprintTIFF_TIFFSetDirectory;
typedef __typeof__(&TIFFVGetField) ImprintTIFF_TIFFVGetField;
typedef __typeof__(&TIFFVGetFieldDefaulted) ImprintTIFF_TIFFVGetFieldDefaulted;
