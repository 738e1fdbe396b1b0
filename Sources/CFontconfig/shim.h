#include <fontconfig/fontconfig.h>
// FreeType faces put into fontconfig patterns (FC_FT_FACE), so that cairo uses faces Imprint
// opened and never closes them (FontLibrary.pinFaces).
#include <fontconfig/fcfreetype.h>
