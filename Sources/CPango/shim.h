#include <pango/pangocairo.h>
#include <pango/pangofc-fontmap.h>
#include <glib-object.h>
// HarfBuzz (Pango's shaper) and its subsetter: the fonts ImprintGraphics' own PDF writer embeds
// (Debian's libharfbuzz-dev, a dependency of libpango1.0-dev).
#include <hb.h>
#include <hb-ot.h>
#include <hb-subset.h>

/// PANGO_FC_FONT_MAP is a GObject cast macro, which Swift cannot import.
static inline PangoFcFontMap *imprint_pango_fc_font_map(PangoFontMap *map) {
  return PANGO_FC_FONT_MAP(map);
}
static inline int imprint_pango_scale(void) { return PANGO_SCALE; }

/// PANGO_FC_FONT is a GObject cast macro, which Swift cannot import.
static inline PangoFcFont *imprint_pango_fc_font(PangoFont *font) {
  return PANGO_FC_FONT(font);
}
