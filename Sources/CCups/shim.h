// libcups's declarations only (module.modulemap links nothing): ImprintPrinting loads libcups
// with dlopen when it first talks to a printer or a CUPS scheduler (ImprintPrinting/LibCups.swift
// says why), and calls it through a table of these function types.
#include <cups/cups.h>

typedef __typeof__(&cupsAddOption) ImprintCups_cupsAddOption;
typedef __typeof__(&cupsCancelDestJob) ImprintCups_cupsCancelDestJob;
typedef __typeof__(&cupsConnectDest) ImprintCups_cupsConnectDest;
typedef __typeof__(&cupsCopyDestInfo) ImprintCups_cupsCopyDestInfo;
typedef __typeof__(&cupsCreateDestJob) ImprintCups_cupsCreateDestJob;
typedef __typeof__(&cupsDoRequest) ImprintCups_cupsDoRequest;
typedef __typeof__(&cupsEncryption) ImprintCups_cupsEncryption;
typedef __typeof__(&cupsFinishDestDocument) ImprintCups_cupsFinishDestDocument;
typedef __typeof__(&cupsFreeDestInfo) ImprintCups_cupsFreeDestInfo;
typedef __typeof__(&cupsFreeDests) ImprintCups_cupsFreeDests;
typedef __typeof__(&cupsFreeOptions) ImprintCups_cupsFreeOptions;
typedef __typeof__(&cupsGetDestWithURI) ImprintCups_cupsGetDestWithURI;
typedef __typeof__(&cupsGetNamedDest) ImprintCups_cupsGetNamedDest;
typedef __typeof__(&cupsGetOption) ImprintCups_cupsGetOption;
typedef __typeof__(&cupsLastError) ImprintCups_cupsLastError;
typedef __typeof__(&cupsLastErrorString) ImprintCups_cupsLastErrorString;
typedef __typeof__(&cupsServer) ImprintCups_cupsServer;
typedef __typeof__(&cupsSetPasswordCB2) ImprintCups_cupsSetPasswordCB2;
typedef __typeof__(&cupsSetServer) ImprintCups_cupsSetServer;
typedef __typeof__(&cupsSetUser) ImprintCups_cupsSetUser;
typedef __typeof__(&cupsStartDestDocument) ImprintCups_cupsStartDestDocument;
typedef __typeof__(&cupsUser) ImprintCups_cupsUser;
typedef __typeof__(&cupsWriteRequestData) ImprintCups_cupsWriteRequestData;
typedef __typeof__(&httpAddrLocalhost) ImprintCups_httpAddrLocalhost;
typedef __typeof__(&httpClose) ImprintCups_httpClose;
typedef __typeof__(&httpConnect2) ImprintCups_httpConnect2;
typedef __typeof__(&httpGetAddress) ImprintCups_httpGetAddress;
typedef __typeof__(&httpIsEncrypted) ImprintCups_httpIsEncrypted;
typedef __typeof__(&ippAddInteger) ImprintCups_ippAddInteger;
typedef __typeof__(&ippAddString) ImprintCups_ippAddString;
typedef __typeof__(&ippDelete) ImprintCups_ippDelete;
typedef __typeof__(&ippEnumString) ImprintCups_ippEnumString;
typedef __typeof__(&ippFindAttribute) ImprintCups_ippFindAttribute;
typedef __typeof__(&ippGetCount) ImprintCups_ippGetCount;
typedef __typeof__(&ippGetInteger) ImprintCups_ippGetInteger;
typedef __typeof__(&ippGetStatusCode) ImprintCups_ippGetStatusCode;
typedef __typeof__(&ippGetString) ImprintCups_ippGetString;
typedef __typeof__(&ippNewRequest) ImprintCups_ippNewRequest;
typedef __typeof__(&ippPort) ImprintCups_ippPort;
