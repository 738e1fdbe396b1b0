/* poppler's own C++ classes (PDFDoc, SplashOutputDev), from libpoppler-private-dev: no Swift
   module imports them; CImprintSplash includes them, and this target gives it pkg-config
   poppler's flags and the link. */
