// SPDX-License-Identifier: Apache-2.0
// CImprintDocumentEngines: the table CImprintEngines.h declares, filled with poppler-glib's and
// qpdf's own functions and Imprint's C++ over poppler and qpdf (splash.cpp, impose.cpp). This
// file is compiled with their own headers: an entry whose type differs from the function's is
// a compile error (-Werror=incompatible-function-pointer-types), not a crash at run time.

#include <poppler.h>
#include <qpdf/qpdf-c.h>

#include "CImprintEngines.h"

#pragma clang diagnostic error "-Wincompatible-function-pointer-types"
#pragma clang diagnostic error "-Wincompatible-pointer-types"

static unsigned int document_permissions(PopplerDocument *document) {
  return (unsigned int)poppler_document_get_permissions(document);
}

static const CImprintEngines table = {
    .version = CIMPRINT_ENGINES_VERSION,
    .size = sizeof(CImprintEngines),
    .poppler_document_new_from_bytes = poppler_document_new_from_bytes,
    .poppler_document_get_n_pages = poppler_document_get_n_pages,
    .poppler_document_get_page = poppler_document_get_page,
    .poppler_document_permissions = document_permissions,
    .poppler_page_get_size = poppler_page_get_size,
    .poppler_page_render = poppler_page_render,
    .poppler_page_render_for_printing = poppler_page_render_for_printing,
    .poppler_error_encrypted = POPPLER_ERROR_ENCRYPTED,
    .poppler_error_damaged = POPPLER_ERROR_DAMAGED,
    .poppler_permission_print = POPPLER_PERMISSIONS_OK_TO_PRINT,
    .qpdf_init = qpdf_init,
    .qpdf_cleanup = qpdf_cleanup,
    .qpdf_read_memory = qpdf_read_memory,
    .qpdf_silence_errors = qpdf_silence_errors,
    .qpdf_set_suppress_warnings = qpdf_set_suppress_warnings,
    .qpdf_has_error = qpdf_has_error,
    .qpdf_get_error = qpdf_get_error,
    .qpdf_get_error_code = qpdf_get_error_code,
    .qpdf_get_error_full_text = qpdf_get_error_full_text,
    .qpdf_more_warnings = qpdf_more_warnings,
    .qpdf_next_warning = qpdf_next_warning,
    .qpdf_is_encrypted = qpdf_is_encrypted,
    .qpdf_get_root = qpdf_get_root,
    .qpdf_get_page_n = qpdf_get_page_n,
    .qpdf_oh_release = qpdf_oh_release,
    .qpdf_oh_get_key = qpdf_oh_get_key,
    .qpdf_oh_is_name_and_equals = qpdf_oh_is_name_and_equals,
    .qpdf_oh_is_integer = qpdf_oh_is_integer,
    .qpdf_oh_is_number = qpdf_oh_is_number,
    .qpdf_oh_is_dictionary = qpdf_oh_is_dictionary,
    .qpdf_oh_is_array = qpdf_oh_is_array,
    .qpdf_oh_is_stream = qpdf_oh_is_stream,
    .qpdf_oh_get_int_value = qpdf_oh_get_int_value,
    .qpdf_oh_get_numeric_value = qpdf_oh_get_numeric_value,
    .qpdf_oh_get_object_id = qpdf_oh_get_object_id,
    .qpdf_oh_get_array_n_items = qpdf_oh_get_array_n_items,
    .qpdf_oh_get_array_item = qpdf_oh_get_array_item,
    .qpdf_oh_get_dict = qpdf_oh_get_dict,
    .qpdf_oh_begin_dict_key_iter = qpdf_oh_begin_dict_key_iter,
    .qpdf_oh_dict_more_keys = qpdf_oh_dict_more_keys,
    .qpdf_oh_dict_next_key = qpdf_oh_dict_next_key,
    .splash_keep_global_params = CImprintSplash_keep_global_params,
    .splash_open = CImprintSplash_open,
    .splash_close = CImprintSplash_close,
    .splash_page_count = CImprintSplash_page_count,
    .splash_page_size = CImprintSplash_page_size,
    .splash_render = CImprintSplash_render,
    .splash_font_counts = CImprintSplash_font_counts,
    .impose_run = CImprintImpose_run,
    .impose_normalize = CImprintImpose_normalize,
    .impose_run_to_memory = CImprintImpose_runToMemory,
    .impose_free = CImprintImpose_free,
};

const CImprintEngines *ImprintDocumentEngines_table(void) { return &table; }
