// SPDX-License-Identifier: Apache-2.0
// CImprintDocumentEngines: the library libImprintDocumentEngines.so. Its one export is the table
// CImprintEngines.h declares (`ImprintDocumentEngines_table`); nothing includes this header.

#ifndef CIMPRINT_DOCUMENT_ENGINES_H
#define CIMPRINT_DOCUMENT_ENGINES_H

#include "CImprintEngines.h"

#endif
