// libpq's declarations only (module.modulemap links nothing): ImprintJobsDB loads libpq with
// dlopen when a jobs database is first connected to (ImprintJobsDB/LibPQ.swift says why), and
// calls it through a table of these function types.
#include <postgresql/libpq-fe.h>

typedef __typeof__(&PQclear) ImprintPQ_clear;
typedef __typeof__(&PQcmdTuples) ImprintPQ_cmdTuples;
typedef __typeof__(&PQconnectPoll) ImprintPQ_connectPoll;
typedef __typeof__(&PQconnectStartParams) ImprintPQ_connectStartParams;
typedef __typeof__(&PQconninfo) ImprintPQ_conninfo;
typedef __typeof__(&PQconninfoFree) ImprintPQ_conninfoFree;
typedef __typeof__(&PQconninfoParse) ImprintPQ_conninfoParse;
typedef __typeof__(&PQconsumeInput) ImprintPQ_consumeInput;
typedef __typeof__(&PQerrorMessage) ImprintPQ_errorMessage;
typedef __typeof__(&PQexecParams) ImprintPQ_execParams;
typedef __typeof__(&PQfinish) ImprintPQ_finish;
typedef __typeof__(&PQfname) ImprintPQ_fname;
typedef __typeof__(&PQfreemem) ImprintPQ_freemem;
typedef __typeof__(&PQgetisnull) ImprintPQ_getisnull;
typedef __typeof__(&PQgetvalue) ImprintPQ_getvalue;
typedef __typeof__(&PQnfields) ImprintPQ_nfields;
typedef __typeof__(&PQnotifies) ImprintPQ_notifies;
typedef __typeof__(&PQntuples) ImprintPQ_ntuples;
typedef __typeof__(&PQreset) ImprintPQ_reset;
typedef __typeof__(&PQresultErrorField) ImprintPQ_resultErrorField;
typedef __typeof__(&PQresultStatus) ImprintPQ_resultStatus;
typedef __typeof__(&PQsetNoticeProcessor) ImprintPQ_setNoticeProcessor;
typedef __typeof__(&PQsocket) ImprintPQ_socket;
typedef __typeof__(&PQstatus) ImprintPQ_status;
