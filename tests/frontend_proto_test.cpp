// Case files: exact round trips through text and binary, and the messages that
// malformed files produce.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "frontend/proto/case_io.h"
#include "frontend/proto/convert.h"
#include "ir/error.h"

namespace parity::frontend {
namespace {

ir::DimExpr D(const std::string& s) { return ir::DimExpr::parse(s); }

ir::TensorType T(ir::DType dt, std::vector<std::string> dims) {
  ir::TensorType t;
  t.dtype = dt;
  for (const auto& d : dims) t.shape.push_back(D(d));
  return t;
}

ir::Op make_op(std::string kind, std::vector<std::string> operands,
               std::vector<std::string> results) {
  ir::Op o;
  o.kind = std::move(kind);
  o.operands = std::move(operands);
  o.results = std::move(results);
  return o;
}

ir::Spec sample_spec() {
  ir::Spec s;
  s.name = "mlp";
  s.dims = {{"B", 8}, {"H", 16}, {"V", 32}};
  ir::Graph& g = s.graph;
  g.inputs = {"x", "w", "lbl"};
  g.types["x"] = T(ir::DType::f32, {"B", "H"});
  g.types["w"] = T(ir::DType::bf16, {"H", "H"});
  g.types["lbl"] = T(ir::DType::i64, {"B"});

  // One op with every attribute kind, including the proto3 defaults (0.0, "")
  // that must survive as set values.
  ir::Op mm = make_op("matmul", {"x", "w"}, {"h"});
  mm.attrs["alpha"] = 0.0;
  mm.attrs["eps"] = 1e-5;
  mm.attrs["fill"] = -std::numeric_limits<double>::infinity();
  mm.attrs["note"] = std::string();
  mm.attrs["mode"] = std::string("fast \"quoted\"\n");
  mm.attrs["offset"] = D("H/2");
  mm.attrs["perm"] = ir::Dims{D("1"), D("0")};
  mm.attrs["none"] = ir::Dims{};
  mm.attrs["axes"] = ir::Strings{"dp", "tp"};
  mm.attrs["groups"] = ir::Groups{{0, 1}, {2, 3}, {}};
  mm.attrs["at"] = ir::Coords{{"dp", D("$dp")}, {"tp", D("$tp*V-1")}};
  g.types["h"] = T(ir::DType::f32, {"B", "H"});
  g.ops.push_back(mm);

  // A loop whose body is a region; its result has no declared type.
  ir::Op loop = make_op("loop", {"h"}, {"y"});
  loop.attrs["count"] = D("4");
  ir::Graph body;
  body.inputs = {"acc"};
  body.types["acc"] = T(ir::DType::f32, {"B", "H"});
  body.ops.push_back(make_op("add", {"acc", "acc"}, {"s"}));
  body.types["s"] = T(ir::DType::f32, {"B", "H"});
  body.outputs = {"s"};
  loop.regions.push_back(body);
  g.ops.push_back(loop);

  g.ops.push_back(make_op("sum", {"y"}, {"loss"}));
  g.types["loss"] = T(ir::DType::f32, {});
  g.outputs = {"loss", "y"};
  s.roles = {{"x", ir::Role::data},
             {"w", ir::Role::param},
             {"lbl", ir::Role::label},
             {"loss", ir::Role::loss}};
  return s;
}

ir::Plan sample_plan() {
  ir::Plan p;
  p.name = "dp2tp2";
  p.mesh.axes = {{"dp", 2}, {"tp", 2}};
  p.dims = {{"B", 8}, {"H", 16}};

  ir::Program s0;
  s0.name = "stage0";
  s0.ranks.fixed["dp"] = {0};
  s0.graph.inputs = {"x", "w"};
  s0.graph.types["x"] = T(ir::DType::f32, {"B/dp", "H"});
  s0.graph.types["w"] = T(ir::DType::bf16, {"H", "H/tp"});
  ir::Op mm = make_op("matmul", {"x", "w"}, {"h"});
  mm.attrs["offset"] = D("$tp*(H/tp)");
  s0.graph.ops.push_back(mm);
  ir::Op ar = make_op("all_reduce", {"h"}, {"r"});
  ar.attrs["axes"] = ir::Strings{"tp"};
  s0.graph.ops.push_back(ar);
  s0.graph.types["r"] = T(ir::DType::f32, {"B/dp", "H/tp"});
  s0.graph.outputs = {"r"};
  p.programs.push_back(s0);

  ir::Program s1;
  s1.name = "stage1";
  s1.ranks.fixed["dp"] = {1};
  s1.ranks.fixed["tp"] = {0, 1};
  s1.graph.inputs = {"a"};
  s1.graph.types["a"] = T(ir::DType::i1, {"1"});
  s1.graph.ops.push_back(make_op("copy", {"a"}, {"b"}));
  s1.graph.outputs = {"b"};
  p.programs.push_back(s1);

  ir::Placement region;
  region.program = "stage0";
  region.value = "x";
  region.spec_value = "x";
  region.kind = ir::PlacementKind::region;
  region.region = {{D("$dp*(B/dp)"), D("B/dp")}, {D("0"), D("H")}};
  p.placements.push_back(region);
  ir::Placement partial;
  partial.program = "stage0";
  partial.value = "h";
  partial.spec_value = "h";
  partial.kind = ir::PlacementKind::partial;
  partial.axes = {"tp"};
  p.placements.push_back(partial);
  return p;
}

ir::Case sample() { return ir::Case{sample_spec(), sample_plan()}; }

// Runs `f` and returns the InvalidInput message it throws ("" if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ir::InvalidInput& e) {
    return e.what();
  }
  return "";
}

// Parses the sample after `mutate` edits its proto form, via text (so lines are known).
std::string error_after(const std::function<void(proto::Case&)>& mutate) {
  proto::Case m = to_proto(sample());
  mutate(m);
  std::string text;
  google::protobuf::TextFormat::PrintToString(m, &text);
  return error_of([&] { parse_case(text, "bad.pbtxt", Format::text); });
}

std::string temp_path(const std::string& name) { return testing::TempDir() + "/" + name; }

TEST(FrontendProto, TextRoundTripIsExact) {
  ir::Case c = sample();
  std::string text = write_case_string(c, Format::text);
  ir::Case back = parse_case(text, "rt.pbtxt", Format::text);
  EXPECT_EQ(back, c);
  // Printing again gives the same bytes: the output is deterministic.
  EXPECT_EQ(write_case_string(back, Format::text), text);
}

TEST(FrontendProto, BinaryRoundTripIsExact) {
  ir::Case c = sample();
  std::string bin = write_case_string(c, Format::binary);
  EXPECT_EQ(parse_case(bin, "rt.pb", Format::binary), c);
  EXPECT_EQ(write_case_string(parse_case(bin, "rt.pb", Format::binary), Format::binary), bin);
}

// The spec and the plan are parsed apart; a field given twice in the bytes
// (two serialized cases concatenated) merges as protobuf merges it.
TEST(FrontendProto, BinaryFieldsGivenTwiceMergeInOrder) {
  proto::Case a = to_proto(sample());
  proto::Case b;
  b.set_version(1);
  b.mutable_spec()->set_name("second");
  b.mutable_plan()->add_mesh()->set_name("extra");
  b.mutable_plan()->mutable_mesh(0)->set_size(1);
  std::string bytes = a.SerializeAsString() + b.SerializeAsString();
  proto::Case merged = a;
  merged.MergeFrom(b);
  ir::Case got = parse_case(bytes, "twice.pb", Format::binary);
  EXPECT_EQ(got, from_proto(merged, "twice.pb"));
  EXPECT_EQ(got.spec->name, "second");
  EXPECT_EQ(got.plan.mesh.axes.back().name, "extra");
  EXPECT_FALSE(got.spec->graph.ops.empty());  // the first part's graph is kept
}

TEST(FrontendProto, TextBinaryTextGivesTheSameText) {
  std::string text = write_case_string(sample(), Format::text);
  std::string bin = write_case_string(parse_case(text, "a.pbtxt", Format::text), Format::binary);
  EXPECT_EQ(write_case_string(parse_case(bin, "a.pb", Format::binary), Format::text), text);
}

TEST(FrontendProto, KeepsDefaultValuedAttributesAndEmptyLists) {
  ir::Case back = parse_case(write_case_string(sample(), Format::binary), "a.pb", Format::binary);
  const ir::Op& mm = back.spec->graph.ops[0];
  ASSERT_NE(mm.attr("alpha"), nullptr);
  EXPECT_EQ(ir::attr_kind(*mm.attr("alpha")), ir::AttrKind::Float);
  ASSERT_NE(mm.attr("note"), nullptr);
  EXPECT_EQ(ir::attr_kind(*mm.attr("note")), ir::AttrKind::String);
  ASSERT_NE(mm.attr("none"), nullptr);
  EXPECT_EQ(ir::attr_kind(*mm.attr("none")), ir::AttrKind::Ints);
}

TEST(FrontendProto, ResultTypesOnlyWhenEveryResultIsDeclared) {
  proto::Case m = to_proto(sample());
  const auto& ops = m.spec().graph().ops();
  EXPECT_EQ(ops[0].result_types_size(), 1);  // matmul -> h
  EXPECT_EQ(ops[1].result_types_size(), 0);  // loop -> y, undeclared
  EXPECT_EQ(ops[1].regions(0).ops(0).result_types_size(), 1);
  EXPECT_EQ(m.version(), kFormatVersion);
}

TEST(FrontendProto, SpecOnlyAndPlanOnlyFiles) {
  ir::Case spec_only{sample_spec(), ir::Plan{}};
  EXPECT_EQ(parse_case(write_case_string(spec_only, Format::text), "s.pbtxt"), spec_only);
  ir::Case plan_only{std::nullopt, sample_plan()};
  ir::Case back = parse_case(write_case_string(plan_only, Format::text), "p.pbtxt");
  EXPECT_FALSE(back.spec.has_value());
  EXPECT_EQ(back, plan_only);
  proto::Case m;
  m.set_version(1);
  m.mutable_spec();
  EXPECT_TRUE(from_proto(m, "x").spec.has_value());
}

TEST(FrontendProto, TextParseRecordsOpLines) {
  std::string text = write_case_string(sample(), Format::text);
  ir::Case back = parse_case(text, "rt.pbtxt");
  int l0 = back.spec->graph.ops[0].line, l1 = back.spec->graph.ops[1].line;
  EXPECT_GT(l0, 0);
  EXPECT_GT(l1, l0);
  EXPECT_GT(back.spec->graph.ops[1].regions[0].ops[0].line, l1);
  EXPECT_GT(back.plan.programs[1].graph.ops[0].line, back.plan.programs[0].graph.ops[1].line);
  // The line is where the op's block starts.
  std::vector<std::string> lines{""};
  for (char ch : text) ch == '\n' ? lines.push_back("") : (void)(lines.back() += ch);
  EXPECT_NE(lines[l0 - 1].find("ops {"), std::string::npos) << lines[l0 - 1];
  // Binary files have no lines.
  ir::Case bin = parse_case(write_case_string(sample(), Format::binary), "rt.pb");
  EXPECT_EQ(bin.spec->graph.ops[0].line, 0);
}

TEST(FrontendProto, NanAttributesRoundTrip) {
  ir::Case c = sample();
  c.spec->graph.ops[0].attrs["alpha"] = -std::numeric_limits<double>::quiet_NaN();
  ir::Case back = parse_case(write_case_string(c, Format::binary), "n.pb", Format::binary);
  EXPECT_TRUE(std::isnan(std::get<double>(*back.spec->graph.ops[0].attr("alpha"))));
  EXPECT_EQ(parse_case(write_case_string(back, Format::text), "n.pbtxt"), back);
}

TEST(FrontendProto, FormatForPath) {
  EXPECT_EQ(format_for_path("a/b.pbtxt"), Format::text);
  EXPECT_EQ(format_for_path("b.txtpb"), Format::text);
  EXPECT_EQ(format_for_path("b.textproto"), Format::text);
  EXPECT_EQ(format_for_path("b.TXT"), Format::text);
  EXPECT_EQ(format_for_path("b.pb"), Format::binary);
  EXPECT_EQ(format_for_path("b.bin"), Format::binary);
  EXPECT_EQ(format_for_path("b.binpb"), Format::binary);
  EXPECT_EQ(format_for_path("b.case"), Format::text);
  EXPECT_EQ(format_for_path("dir.pb/case"), Format::text);
}

TEST(FrontendProto, FilesRoundTripAndUnknownExtensionsAreSniffed) {
  ir::Case c = sample();
  for (const char* name : {"rt.pbtxt", "rt.pb", "rt.binpb", "rt.txtpb"}) {
    std::string path = temp_path(name);
    write_case(c, path);
    EXPECT_EQ(read_case(path), c) << name;
  }
  for (Format f : {Format::text, Format::binary}) {
    std::string path = temp_path(f == Format::text ? "sniff_text.case" : "sniff_bin.case");
    std::ofstream(path, std::ios::binary) << write_case_string(c, f);
    EXPECT_EQ(read_case(path), c) << path;
  }
  // A binary file named as text is read as text, and fails as such.
  std::string mislabeled = temp_path("binary.pbtxt");
  std::ofstream(mislabeled, std::ios::binary) << write_case_string(c, Format::binary);
  EXPECT_NE(error_of([&] { read_case(mislabeled); }).find("binary.pbtxt:1:"), std::string::npos);
}

TEST(FrontendProto, WriteFailureNamesThePath) {
  try {
    write_case(sample(), "/nonexistent-dir/x.pbtxt");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.pbtxt: cannot write"),
              std::string::npos)
        << e.what();
  }
}

// --- errors -----------------------------------------------------------------

#define EXPECT_HAS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

TEST(FrontendProtoErrors, MissingFile) {
  std::string msg = error_of([] { read_case("/nonexistent-dir/none.pbtxt"); });
  EXPECT_HAS(msg, "/nonexistent-dir/none.pbtxt: cannot open: No such file or directory");
  msg = error_of([] { read_case(testing::TempDir()); });
  EXPECT_HAS(msg, "cannot open");
}

TEST(FrontendProtoErrors, GarbageTextNamesLineAndColumn) {
  std::string text = "version: 1\nplan {\n  name: \"p\"\n  bogus_field: 3\n}\n";
  std::string msg = error_of([&] { parse_case(text, "bad.pbtxt", Format::text); });
  EXPECT_HAS(msg, "bad.pbtxt:4:");
  EXPECT_HAS(msg, "bogus_field");
  msg = error_of([] { parse_case("version: 1\nplan { name: ", "g.pbtxt"); });
  EXPECT_HAS(msg, "g.pbtxt:2:");
  msg = error_of([] { parse_case("}}}{{{", "g.txtpb", Format::text); });
  EXPECT_HAS(msg, "g.txtpb:1:1: ");
}

TEST(FrontendProtoErrors, TruncatedBinary) {
  std::string bin = write_case_string(sample(), Format::binary);
  for (const std::string& bad : {bin.substr(0, bin.size() - 3), bin.substr(0, bin.size() / 2)}) {
    std::string msg = error_of([&] { parse_case(bad, "t.pb", Format::binary); });
    EXPECT_HAS(msg, "t.pb:1:1: not a valid binary parity case (truncated or corrupt protobuf)");
  }
  // Sniffed as binary (it has control bytes), so the message says why.
  std::string msg = error_of([&] { parse_case(bin.substr(0, bin.size() - 3), "t.case"); });
  EXPECT_HAS(msg, "not a valid binary parity case");
}

TEST(FrontendProtoErrors, TextStringsMustBeUtf8LikeBinary) {
  std::string msg =
      error_of([] { parse_case("version: 1\nplan { name: \"\\377\" }\n", "u.pbtxt"); });
  EXPECT_HAS(msg, "u.pbtxt:1:1: string field 'parity.proto.Plan.name' is not valid UTF-8");
  EXPECT_HAS(error_of([] { parse_case("version: 1\nplan { name: \"\\355\\240\\200\" }", "u"); }),
             "not valid UTF-8");  // a UTF-16 surrogate
  ir::Case c = sample();
  c.plan.name = "h\xc3\xa9llo \xf0\x9f\x99\x82";
  ir::Case back = parse_case(write_case_string(c, Format::text), "u.pbtxt");
  EXPECT_EQ(back, c);
  EXPECT_EQ(parse_case(write_case_string(back, Format::binary), "u.pb"), c);
}

TEST(FrontendProtoErrors, UnknownVersion) {
  std::string msg = error_of([] { parse_case("version: 7\nplan {}\n", "v.pbtxt"); });
  EXPECT_HAS(msg, "v.pbtxt:1:1: unsupported format version 7, expected 1");
  msg = error_of([] { parse_case("plan {}\n", "v.pbtxt"); });
  EXPECT_HAS(msg, "unsupported format version 0");
  EXPECT_HAS(msg, "version: 1");
}

TEST(FrontendProtoErrors, NeitherSpecNorPlan) {
  EXPECT_HAS(error_of([] { parse_case("version: 1\n", "e.pbtxt"); }), "neither a spec nor a plan");
}

TEST(FrontendProtoErrors, BadDtype) {
  std::string msg = error_after([](proto::Case& m) {
    m.mutable_spec()->mutable_graph()->mutable_inputs(1)->mutable_type()->set_dtype("f16");
  });
  EXPECT_HAS(msg, "bad.pbtxt, program (spec): input #1 'w'");
  EXPECT_HAS(msg, "unknown dtype 'f16'");
  EXPECT_HAS(msg, "f32, bf16, f64, i64, i1");
  msg = error_after([](proto::Case& m) {
    m.mutable_plan()
        ->mutable_programs(0)
        ->mutable_graph()
        ->mutable_ops(1)
        ->mutable_result_types(0)
        ->set_dtype("float");
  });
  EXPECT_HAS(msg, "program stage0, op #1 all_reduce -> r");
  EXPECT_HAS(msg, "result type of 'r': unknown dtype 'float'");
}

TEST(FrontendProtoErrors, BadDimExpression) {
  std::string msg = error_after([](proto::Case& m) {
    auto* op = m.mutable_plan()->mutable_programs(0)->mutable_graph()->mutable_ops(0);
    op->mutable_attrs(0)->set_i("H/");
  });
  EXPECT_HAS(msg, "bad.pbtxt, program stage0, op #0 matmul -> h (line ");
  EXPECT_HAS(msg, "attribute 'offset': dim expression 'H/'");
  msg = error_after([](proto::Case& m) {
    m.mutable_spec()->mutable_graph()->mutable_inputs(0)->mutable_type()->set_shape(1, "H/");
  });
  EXPECT_HAS(msg, "input #0 'x'");
  EXPECT_HAS(msg, "dim 1: dim expression 'H/'");
  msg = error_after([](proto::Case& m) {
    m.mutable_plan()->mutable_placements(0)->mutable_region(0)->set_size("B/dp)");
  });
  EXPECT_HAS(msg, "placement #0 ('x' -> 'x')");
  EXPECT_HAS(msg, "region dim 0 size: dim expression 'B/dp)'");
  msg = error_after([](proto::Case& m) {
    auto* region = m.mutable_spec()->mutable_graph()->mutable_ops(1)->mutable_regions(0);
    region->mutable_ops(0)->add_attrs()->set_i("");
  });
  EXPECT_HAS(msg, "op #1 loop -> y (line ");
  EXPECT_HAS(msg, "region 0, #0 add -> s (line ");
}

// The spec and the programs are read in parallel; with errors in several of
// them the first in file order is reported: the spec's, then the mesh's, then
// the lowest program's.
TEST(FrontendProtoErrors, SeveralErrorsReportTheFirstInFileOrder) {
  auto break_program = [](proto::Case& m, int i) {
    m.mutable_plan()->mutable_programs(i)->mutable_graph()->mutable_inputs(0)->mutable_type()->set_shape(0, "H/");
  };
  auto break_spec = [](proto::Case& m) {
    m.mutable_spec()->mutable_graph()->mutable_inputs(0)->mutable_type()->set_shape(1, "H/");
  };
  auto break_mesh = [](proto::Case& m) { m.mutable_plan()->mutable_mesh(0)->set_size(0); };
  for (int round = 0; round < 20; ++round) {  // thread timing varies between rounds
    EXPECT_HAS(error_after([&](proto::Case& m) {
                 break_program(m, 1);
                 break_program(m, 0);
                 break_mesh(m);
                 break_spec(m);
               }),
               "program (spec)");
    EXPECT_HAS(error_after([&](proto::Case& m) {
                 break_program(m, 1);
                 break_program(m, 0);
                 break_mesh(m);
               }),
               "mesh axis 'dp'");
    EXPECT_HAS(error_after([&](proto::Case& m) {
                 break_program(m, 1);
                 break_program(m, 0);
               }),
               "program stage0");
  }
}

TEST(FrontendProtoErrors, UnknownRoleAndPlacementKind) {
  std::string msg =
      error_after([](proto::Case& m) { m.mutable_spec()->mutable_roles(0)->set_role("weights"); });
  EXPECT_HAS(msg, "unknown role 'weights'");
  EXPECT_HAS(msg, "param, data, label");
  msg =
      error_after([](proto::Case& m) { m.mutable_plan()->mutable_placements(1)->set_kind("sum"); });
  EXPECT_HAS(msg, "placement #1 ('h' -> 'h') (line ");
  EXPECT_HAS(msg, "unknown kind 'sum' (expected region or partial)");
}

TEST(FrontendProtoErrors, OpShape) {
  auto spec_op = [](proto::Case& m, int i) {
    return m.mutable_spec()->mutable_graph()->mutable_ops(i);
  };
  EXPECT_HAS(error_after([&](proto::Case& m) { spec_op(m, 2)->add_attrs()->set_name("k"); }),
             "attribute 'k': no value");
  EXPECT_HAS(error_after([&](proto::Case& m) { spec_op(m, 2)->clear_kind(); }),
             "op #2 (no kind) -> loss (line ");
  EXPECT_HAS(error_after([&](proto::Case& m) { spec_op(m, 2)->clear_kind(); }), "op has no kind");
  EXPECT_HAS(error_after([&](proto::Case& m) { spec_op(m, 0)->add_results("h2"); }),
             "1 result_types for 2 results");
  EXPECT_HAS(error_after([&](proto::Case& m) {
               auto* a = spec_op(m, 2)->add_attrs();
               a->set_name("k");
               a->set_f(1);
               *spec_op(m, 2)->add_attrs() = *a;
             }),
             "attribute 'k': duplicate attribute");
}

TEST(FrontendProtoErrors, Duplicates) {
  std::string msg = error_after([](proto::Case& m) {
    auto* g = m.mutable_spec()->mutable_graph();
    *g->add_inputs() = g->inputs(0);
  });
  EXPECT_HAS(msg, "input #3 'x' (line ");
  EXPECT_HAS(msg, "): duplicate input name");
  EXPECT_HAS(error_after([](proto::Case& m) {
               auto* d = m.mutable_plan()->add_dims();
               d->set_name("B");
             }),
             "plan dims: duplicate dim 'B'");
  EXPECT_HAS(error_after([](proto::Case& m) {
               auto* d = m.mutable_spec()->add_dims();
               d->set_name("H");
             }),
             "spec dims: duplicate dim 'H'");
  EXPECT_HAS(error_after([](proto::Case& m) {
               auto* a = m.mutable_plan()->add_mesh();
               a->set_name("tp");
               a->set_size(2);
             }),
             "mesh axis 'tp': duplicate axis");
}

TEST(FrontendProtoErrors, MeshLimits) {
  EXPECT_HAS(error_after([](proto::Case& m) { m.mutable_plan()->mutable_mesh(0)->set_size(0); }),
             "mesh axis 'dp': size 0 is out of range (1 to 1048576)");
  EXPECT_HAS(error_after([](proto::Case& m) {
               m.mutable_plan()->mutable_mesh(0)->set_size((int64_t{1} << 20) + 1);
             }),
             "is out of range");
  EXPECT_HAS(error_after([](proto::Case& m) {
               m.mutable_plan()->mutable_mesh(0)->set_size(int64_t{1} << 20);
               m.mutable_plan()->mutable_mesh(1)->set_size(int64_t{1} << 5);
             }),
             "more than 16777216 ranks");
  // The largest mesh allowed is fine.
  proto::Case m = to_proto(sample());
  m.mutable_plan()->mutable_mesh(0)->set_size(int64_t{1} << 20);
  m.mutable_plan()->mutable_mesh(1)->set_size(int64_t{1} << 4);
  EXPECT_EQ(from_proto(m, "x").plan.mesh.num_ranks(), int64_t{1} << 24);
}

TEST(FrontendProtoErrors, RegionNestingDepth) {
  auto nest = [](int depth) {
    proto::Case m;
    m.set_version(1);
    proto::Graph* g = m.mutable_plan()->add_programs()->mutable_graph();
    for (int d = 0; d < depth; ++d) {
      proto::Op* op = g->add_ops();
      op->set_kind("loop");
      g = op->add_regions();
    }
    return m;
  };
  EXPECT_NO_THROW(from_proto(nest(16), "deep.pb"));
  EXPECT_HAS(error_of([&] { from_proto(nest(17), "deep.pb"); }),
             "regions nested deeper than 16 levels");
  // Far deeper than the parsers allow: rejected without exhausting the stack.
  std::string text = "version: 1\nplan { programs { graph {";
  for (int d = 0; d < 5000; ++d) text += " ops { kind: \"loop\" regions {";
  EXPECT_HAS(error_of([&] { parse_case(text, "deep.pbtxt", Format::text); }), "deep.pbtxt:");
  std::string bin = nest(200).SerializeAsString();
  EXPECT_HAS(error_of([&] { parse_case(bin, "deep.pb", Format::binary); }), "deep.pb:1:1: not a valid");
}

}  // namespace
}  // namespace parity::frontend
