import protobuf from 'protobufjs';

/**
 * The part of ONNX's protobuf schema (onnx/onnx.proto, IR version 8) that a model file of plain
 * tensors needs: a model, its graph, nodes with attributes, initializers, typed inputs and outputs.
 * Names and field numbers are the spec's; messages and fields a BERT encoder does not use are left
 * out (protobuf readers skip what they do not know, and nothing here is ever read back by ONNX).
 */
const ONNX_SUBSET = `
syntax = "proto3";
package onnx;

message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5; FLOATS = 6; INTS = 7; STRINGS = 8; }
  string name = 1;
  float f = 2;
  int64 i = 3;
  bytes s = 4;
  TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
  AttributeType type = 20;
}

message ValueInfoProto {
  string name = 1;
  TypeProto type = 2;
}

message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  string name = 3;
  string op_type = 4;
  repeated AttributeProto attribute = 5;
  string domain = 7;
}

message ModelProto {
  int64 ir_version = 1;
  string producer_name = 2;
  string producer_version = 3;
  string doc_string = 6;
  GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}

message GraphProto {
  repeated NodeProto node = 1;
  string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}

message TensorProto {
  enum DataType { UNDEFINED = 0; FLOAT = 1; INT64 = 7; }
  repeated int64 dims = 1;
  int32 data_type = 2;
  string name = 8;
  bytes raw_data = 9;
}

message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
  }
  repeated Dimension dim = 1;
}

message TypeProto {
  message Tensor {
    int32 elem_type = 1;
    TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
}

message OperatorSetIdProto {
  string domain = 1;
  int64 version = 2;
}
`;

let parsed: protobuf.Type | undefined;

/** onnx.ModelProto, parsed on first use (importing @engram/testing costs nothing until a model is written). */
export function modelProto(): protobuf.Type {
  parsed ??= protobuf.parse(ONNX_SUBSET, { keepCase: true }).root.lookupType('onnx.ModelProto');
  return parsed;
}

/** TensorProto.DataType values used here. */
export const DataType = { FLOAT: 1, INT64: 7 } as const;
/** AttributeProto.AttributeType values used here. */
export const AttributeType = { FLOAT: 1, INT: 2, TENSOR: 4, INTS: 7 } as const;
