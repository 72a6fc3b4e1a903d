//! stub
pub fn read(_r: impl std::io::Read, _sink: &mut super::Sink<'_>) -> anyhow::Result<()> {
    Ok(())
}
