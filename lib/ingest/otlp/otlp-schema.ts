/**
 * The OTLP logs messages this service reads and writes, as a protobufjs
 * JSON descriptor (field numbers as in opentelemetry-proto's
 * `opentelemetry/proto/{collector/logs/v1,logs/v1,common/v1,resource/v1}`).
 * Only what OTLP/HTTP logs needs is declared; unknown fields of a request
 * are skipped by the decoder, as protobuf wants. (Errors are answered in the
 * general JSON envelope, so `google.rpc.Status` is not needed.)
 */
import protobuf from 'protobufjs';

const ANY_VALUE = {
  oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
  fields: {
    stringValue: { type: 'string', id: 1 },
    boolValue: { type: 'bool', id: 2 },
    intValue: { type: 'int64', id: 3 },
    doubleValue: { type: 'double', id: 4 },
    arrayValue: { type: 'ArrayValue', id: 5 },
    kvlistValue: { type: 'KeyValueList', id: 6 },
    bytesValue: { type: 'bytes', id: 7 },
  },
};

const DESCRIPTOR = {
  nested: {
    otlp: {
      nested: {
        AnyValue: ANY_VALUE,
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        InstrumentationScope: {
          fields: {
            name: { type: 'string', id: 1 },
            version: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
            droppedAttributesCount: { type: 'uint32', id: 4 },
          },
        },
        Resource: {
          fields: {
            attributes: { rule: 'repeated', type: 'KeyValue', id: 1 },
            droppedAttributesCount: { type: 'uint32', id: 2 },
          },
        },
        LogRecord: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            observedTimeUnixNano: { type: 'fixed64', id: 11 },
            severityNumber: { type: 'int32', id: 2 },
            severityText: { type: 'string', id: 3 },
            body: { type: 'AnyValue', id: 5 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 6 },
            droppedAttributesCount: { type: 'uint32', id: 7 },
            flags: { type: 'fixed32', id: 8 },
            traceId: { type: 'bytes', id: 9 },
            spanId: { type: 'bytes', id: 10 },
            eventName: { type: 'string', id: 12 },
          },
        },
        ScopeLogs: {
          fields: {
            scope: { type: 'InstrumentationScope', id: 1 },
            logRecords: { rule: 'repeated', type: 'LogRecord', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ResourceLogs: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeLogs: { rule: 'repeated', type: 'ScopeLogs', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ExportLogsServiceRequest: { fields: { resourceLogs: { rule: 'repeated', type: 'ResourceLogs', id: 1 } } },
        ExportLogsPartialSuccess: {
          fields: { rejectedLogRecords: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } },
        },
        ExportLogsServiceResponse: { fields: { partialSuccess: { type: 'ExportLogsPartialSuccess', id: 1 } } },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(DESCRIPTOR);
const type = (name: string) => root.lookupType(`otlp.${name}`);

export const OTLP = {
  ExportLogsServiceRequest: type('ExportLogsServiceRequest'),
  ExportLogsServiceResponse: type('ExportLogsServiceResponse'),
  ResourceLogs: type('ResourceLogs'),
  ScopeLogs: type('ScopeLogs'),
  LogRecord: type('LogRecord'),
  Resource: type('Resource'),
  InstrumentationScope: type('InstrumentationScope'),
  AnyValue: type('AnyValue'),
  KeyValue: type('KeyValue'),
} as const;

/** The protobufjs reader, for walking a request's outer messages by hand. */
export const ProtoReader = protobuf.Reader;
