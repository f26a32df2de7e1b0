// The default character's joints and clips, and its glTF-ready pieces.
// `cargo run -p anim-mannequin --example inspect`.
fn main() {
    let m = anim_mannequin::build();
    println!("{} joints:", m.skeleton.len());
    for (i, name) in m.skeleton.names().iter().enumerate() {
        let parent = m.skeleton.parent(i).map_or("-".to_owned(), |p| m.skeleton.names()[p].clone());
        println!("  {i:2} {name:12} parent {parent}");
    }
    println!("mesh: {} vertices, {} triangles", m.mesh.vertex_count(), m.mesh.indices.len() / 3);
    println!("morph targets: {:?}", m.morph.names());
    for clip in &m.clips {
        let curves: Vec<&str> = clip.curves().iter().map(|c| c.name.as_str()).collect();
        println!("clip {:10} {:.2} s, curves {curves:?}", clip.name(), clip.duration());
    }
}
