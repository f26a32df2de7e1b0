//! What the demos show of an animation graph that plays: one line per state machine taking
//! part (its state, and the transition in progress), the blend spaces taking part with
//! their weights, and (feature `ui`) a panel row per parameter that sets it: floats as
//! sliders over their range (a drag box when the graph gives none), bools as check boxes,
//! triggers as buttons. The locomotion demo and the viewer share them.

use anim_graph::event::NodeId;
use anim_graph::graph::{Graph, NodeType};
use anim_graph::instance::GraphInstance;

/// One line per machine taking part: `name: state`, or `name: from > to crossfade 40%`
/// (or `inertialize`) while a transition runs.
pub fn machine_lines(graph: &Graph, instance: &GraphInstance) -> Vec<String> {
    instance
        .active_states()
        .map(|(m, s)| {
            let name = graph.node_name(m).unwrap_or("?");
            let state = graph.state_name(m, s).unwrap_or("?");
            match instance.transition(m) {
                Some(t) => format!(
                    "{name}: {} > {state} {} {:.0}%",
                    graph.state_name(m, t.from).unwrap_or("?"),
                    if t.crossfade { "crossfade" } else { "inertialize" },
                    100.0 * (t.elapsed / t.duration).min(1.0)
                ),
                None => format!("{name}: {state}"),
            }
        })
        .collect()
}

/// The 1D and 2D blend spaces that took part in the last update, in node order.
pub fn active_blend_spaces<'a>(graph: &'a Graph, instance: &'a GraphInstance) -> impl Iterator<Item = NodeId> + 'a {
    graph.nodes().filter(|&n| {
        matches!(graph.node_type(n), Some(NodeType::BlendSpace1d | NodeType::BlendSpace2d)) && instance.weight(n) > 0.0
    })
}

#[cfg(feature = "ui")]
pub use panel::{blend_space_bars, param_row};

#[cfg(feature = "ui")]
mod panel {
    use super::active_blend_spaces;
    use crate::ui::tag;
    use crate::widgets::{check, slider};
    use anim_graph::graph::Graph;
    use anim_graph::instance::GraphInstance;
    use anim_graph::param::{ParamInfo, ParamKind};
    use anim_render_vk::ui::egui;

    /// A grid row (see [`crate::widgets::grid`]) for parameter `info` of `graph`, showing
    /// and setting its value in `instance`: a float as a slider over its range (a drag box
    /// when it has none), a bool as a check box, a trigger as a button. The control is
    /// tagged `prefix` followed by the parameter's name. Returns whether the row set the
    /// parameter.
    pub fn param_row(
        ui: &mut egui::Ui,
        graph: &Graph,
        instance: &mut GraphInstance,
        info: &ParamInfo,
        prefix: &str,
    ) -> bool {
        let name = info.name.as_str();
        let id = format!("{prefix}{name}");
        match info.kind {
            ParamKind::Float => {
                let Ok(h) = graph.float_param(name) else { return false };
                let mut v = instance.float(h).unwrap_or(info.default);
                let moved = if info.min.is_finite() && info.max.is_finite() && info.min < info.max {
                    let step = f64::from((info.max - info.min) / 1000.0);
                    slider(ui, name, &id, &mut v, info.min..=info.max, |s| s.step_by(step), |v| format!("{v:+.3}"))
                } else {
                    ui.label(name);
                    let changed = tag(ui.add(egui::DragValue::new(&mut v).speed(0.01)), &id).changed();
                    ui.end_row();
                    changed
                };
                moved && instance.set_float(h, v.clamp(info.min, info.max)).is_ok()
            }
            ParamKind::Bool => {
                let Ok(h) = graph.bool_param(name) else { return false };
                let mut v = instance.bool(h).unwrap_or(info.default != 0.0);
                check(ui, name, &id, &mut v, "") && instance.set_bool(h, v).is_ok()
            }
            ParamKind::Trigger => {
                let Ok(h) = graph.trigger_param(name) else { return false };
                ui.label(name);
                let fired = tag(ui.button("fire"), &id).clicked();
                ui.end_row();
                fired && instance.set_trigger(h).is_ok()
            }
        }
    }

    /// A bar per clip (child) of each blend space taking part, with its weight (children
    /// at weight 0 are left out).
    pub fn blend_space_bars(ui: &mut egui::Ui, graph: &Graph, instance: &GraphInstance) {
        for space in active_blend_spaces(graph, instance) {
            let (kids, weights) = (graph.blend_children(space), instance.blend_weights(space));
            ui.weak(graph.node_name(space).unwrap_or("blend space"));
            for (&child, &w) in kids.iter().zip(weights).filter(|(_, w)| **w > 0.0) {
                let name = graph.node_name(child).unwrap_or("?");
                ui.add(egui::ProgressBar::new(w).desired_height(14.0).text(format!("{name} {w:.2}")));
            }
        }
    }
}
