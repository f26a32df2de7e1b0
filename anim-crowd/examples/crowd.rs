// A crowd of the default character: its clips baked into an animation atlas, a thousand
// characters updated together into GPU records, and one character's palette read back the
// way the shaders compute it. `cargo run -p anim-crowd --example crowd`.
use anim_core::skin::{Palette, Skin, SkinMethod};
use anim_crowd::prelude::*;
use anim_math::{Quat, Vec3};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let sources: Vec<AtlasSource> = m.clips.iter().map(|clip| AtlasSource { clip, looping: true }).collect();
    let settings = BakeSettings { rate: 30.0, layout: TextureLayout::ModelTrs, format: TexelFormat::F32 };
    let atlas = AnimAtlas::bake(&m.skeleton, &skin, &[&m.mesh], &sources, &settings)?;

    let mut crowd = Crowd::new(atlas.clips());
    for i in 0..1000 {
        let position = Vec3::new((i % 40) as f32, 0.0, (i / 40) as f32);
        let clip = (i % 3) as u32; // idle, walk, run
        let desc =
            CharacterDesc { position, rotation: Quat::identity(), scale: 1.0, clip, time: 0.01 * i as f32, speed: 1.0 };
        crowd.add(desc)?;
    }
    for _ in 0..60 {
        crowd.update(1.0 / 60.0);
    }
    // What a GPU reads: 64 bytes a character.
    let records: &[u8] = bytemuck::cast_slice(crowd.instances());
    // Character 7's palette, as the shaders compute it from its record.
    let r = crowd.instances()[7];
    let pair = atlas.frame_pair(r.factors[3] as usize, crowd.time(7).ok_or("character 7")?).ok_or("its clip")?;
    let mut palette = Palette::new(SkinMethod::Lbs);
    atlas.palette(pair, None, SkinMethod::Lbs, &mut palette)?;
    println!(
        "{} characters, {} bytes of records, atlas {}×{}",
        crowd.len(),
        records.len(),
        atlas.width(),
        atlas.height()
    );
    Ok(())
}
