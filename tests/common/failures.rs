//! Many cases in one test: collect every failure, then report them all.

/// Collects failures of many cases in one test and panics with all of them.
#[derive(Default)]
pub struct Failures {
    list: Vec<String>,
    total: usize,
}

impl Failures {
    pub fn case(&mut self) {
        self.total += 1;
    }
    pub fn fail(&mut self, name: &str, msg: String) {
        self.list.push(format!("### {name}\n{msg}"));
    }
    pub fn finish(self, what: &str) {
        if !self.list.is_empty() {
            panic!(
                "{} of {} {what} case(s) failed:\n\n{}",
                self.list.len(),
                self.total,
                self.list.join("\n\n")
            );
        }
        assert!(self.total > 0, "no {what} cases ran");
    }
}
