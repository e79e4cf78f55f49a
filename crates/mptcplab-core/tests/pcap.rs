//! Packet captures (`pcap` module): the records parse as pcap + IPv4 + TCP, their payload
//! lengths add up to the subflows' counters, the options are where RFC 8684 puts them,
//! and attaching a capture changes nothing in the run.

mod common;

use common::{build, scenario_file, two_link_toml};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// A sink the test can read after the run.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
}

struct Rec {
    t_ns: u64,
    orig: usize,
    data: Vec<u8>,
}

fn le32(b: &[u8]) -> u32 { u32::from_le_bytes([b[0], b[1], b[2], b[3]]) }
fn be16(b: &[u8]) -> u16 { u16::from_be_bytes([b[0], b[1]]) }
fn be32(b: &[u8]) -> u32 { u32::from_be_bytes([b[0], b[1], b[2], b[3]]) }

fn records(file: &[u8]) -> Vec<Rec> {
    assert_eq!(le32(&file[0..4]), 0xa1b2_3c4d, "nanosecond magic");
    assert_eq!(le32(&file[16..20]), 128, "snaplen");
    assert_eq!(le32(&file[20..24]), 101, "LINKTYPE_RAW");
    let mut out = Vec::new();
    let mut i = 24;
    while i < file.len() {
        let (s, ns, incl, orig) = (le32(&file[i..]), le32(&file[i + 4..]), le32(&file[i + 8..]) as usize, le32(&file[i + 12..]) as usize);
        assert!(incl <= 128 && incl <= orig);
        out.push(Rec { t_ns: s as u64 * 1_000_000_000 + ns as u64, orig, data: file[i + 16..i + 16 + incl].to_vec() });
        i += 16 + incl;
    }
    assert_eq!(i, file.len(), "the file ends at a record boundary");
    out
}

fn ones_sum(b: &[u8]) -> u16 {
    let mut s: u32 = b.chunks(2).map(|w| (w[0] as u32) << 8 | *w.get(1).unwrap_or(&0) as u32).sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// Walk TCP options: (kind, body) pairs.
fn options(opts: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            k => {
                let l = opts[i + 1] as usize;
                assert!(l >= 2 && i + l <= opts.len(), "option {k} length {l} overruns");
                v.push((k, opts[i + 2..i + l].to_vec()));
                i += l;
            }
        }
    }
    v
}

fn run_with_pcap(toml: &str, secs: u64) -> (mptcplab_core::Simulator, Vec<Vec<u8>>) {
    let sc = common::scenario_toml(toml);
    let mut sim = build(&sc, None);
    sim.end = mptcplab_core::units::SimTime::from_secs(secs);
    let sinks: Vec<Shared> = sim.plan.paths.iter().map(|_| Shared::default()).collect();
    sim.attach_pcap(sinks.iter().map(|s| Box::new(s.clone()) as Box<dyn Write + Send>).collect());
    sim.run();
    let recs = sim.finish_pcap().expect("attached").expect("no write error");
    let files: Vec<Vec<u8>> = sinks.iter().map(|s| s.0.lock().unwrap().clone()).collect();
    for (f, n) in files.iter().zip(&recs) {
        assert_eq!(records(f).len() as u64, *n);
    }
    (sim, files)
}

fn lossy_two_paths() -> String {
    two_link_toml("duration = \"4 s\"", ("20 Mbit/s", "10 ms", "40 pkts"), "loss = 0.01", ("8 Mbit/s", "40 ms", "60 pkts"), "cc = \"lia\"")
}

#[test]
fn captured_payload_per_path_equals_the_subflows_bytes_and_segments_sent() {
    let (sim, files) = run_with_pcap(&lossy_two_paths(), 4);
    let subs = sim.subflow_summary();
    assert_eq!(subs.len(), 2);
    for s in &subs {
        let recs = records(&files[s.path as usize]);
        let (mut bytes, mut segs) = (0u64, 0u64);
        for r in &recs {
            let ip = &r.data;
            assert_eq!(ip[0], 0x45);
            assert_eq!(be16(&ip[2..]) as usize, r.orig, "IPv4 total length = original length");
            assert_eq!(ones_sum(&ip[..20]), 0xffff, "IPv4 header checksum");
            let thl = (ip[32] >> 4) as usize * 4;
            let payload = r.orig - 20 - thl;
            if ip[12..16] == [10, 100, s.path as u8, 1] && payload > 0 {
                bytes += payload as u64;
                segs += 1;
            }
        }
        assert!(s.bytes_retrans > 0, "the lossy path retransmits: the count covers resends");
        assert_eq!((bytes, segs), (s.bytes_sent, s.segs_sent), "path {}", s.path);
    }
}

#[test]
fn tcp_checksums_hold_for_headers_without_payload_and_times_never_go_back() {
    let (_, files) = run_with_pcap(&lossy_two_paths(), 2);
    let mut checked = 0;
    for f in &files {
        let recs = records(f);
        assert!(recs.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        for r in recs.iter().filter(|r| r.data.len() == r.orig) {
            let ip = &r.data;
            let tcp = &ip[20..];
            let mut pseudo = ip[12..20].to_vec();
            pseudo.extend_from_slice(&[0, 6]);
            pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
            let s = ones_sum(&[pseudo.as_slice(), tcp].concat());
            assert_eq!(s, 0xffff, "TCP checksum");
            checked += 1;
        }
    }
    assert!(checked > 100);
}

#[test]
fn mptcp_options_follow_rfc_8684_and_the_join_token_is_the_servers() {
    let (_, files) = run_with_pcap(&lossy_two_paths(), 2);
    let mut server_key = None;
    let mut join_token = None;
    let mut data = 0;
    for f in &files {
        for r in records(f) {
            let ip = &r.data;
            let tcp = &ip[20..];
            let thl = (tcp[12] >> 4) as usize * 4;
            let flags = tcp[13];
            let opts = options(&tcp[20..thl]);
            let mp: Vec<&Vec<u8>> = opts.iter().filter(|(k, _)| *k == 30).map(|(_, b)| b).collect();
            assert!(opts.iter().any(|(k, _)| *k == 8), "timestamps on every segment");
            assert_eq!(mp.len(), 1, "one MPTCP option per segment");
            let (sub, body) = (mp[0][0] >> 4, mp[0]);
            let payload = r.orig - 20 - thl;
            match (flags, sub) {
                (0x12, 0) => server_key = Some(be32(&body[2..]) as u64) .map(|hi| hi << 32 | be32(&body[6..]) as u64),
                (0x02, 1) => join_token = Some(be32(&body[2..])),
                _ => {}
            }
            if payload > 0 {
                data += 1;
                // DSS: M and m set, 64-bit DSN, relative SSN, data-level length = payload.
                assert_eq!((sub, body[1] & 0x0c), (2, 0x0c));
                assert_eq!(be16(&body[14..]) as usize, payload);
                assert_eq!(body.len() + 2, 18, "no DSS checksum");
            }
        }
    }
    assert!(data > 100);
    let key = server_key.expect("an MP_CAPABLE SYN-ACK");
    assert_eq!(join_token, Some(mptcplab_core::pcap::token_and_idsn(key).0));
}

#[test]
fn attaching_a_capture_changes_nothing_in_the_run() {
    let sc = scenario_file("scenarios/two-paths-wifi-lte.toml");
    let mut a = build(&sc, None);
    a.end = mptcplab_core::units::SimTime::from_secs(3);
    a.run();
    let (b, _) = run_with_pcap(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/two-paths-wifi-lte.toml")).unwrap(), 3);
    assert_eq!(format!("{:?}", a.subflow_summary()), format!("{:?}", b.subflow_summary()));
    assert_eq!(a.stats().events, b.stats().events);
}

#[test]
fn same_seed_gives_identical_capture_bytes_and_another_seed_does_not() {
    let t = lossy_two_paths();
    let (_, x) = run_with_pcap(&t, 2);
    let (_, y) = run_with_pcap(&t, 2);
    assert_eq!(x, y);
    let (_, z) = run_with_pcap(&t.replace("duration = \"4 s\"", "duration = \"4 s\"\nseed = 7"), 2);
    assert_ne!(x, z);
}

#[test]
fn a_path_managers_backup_change_shows_as_the_clients_mp_prio_with_the_b_flag() {
    // PCDC puts the poor path's subflow in standby at establishment (seed 000, MP_PRIO).
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/path-managers/pcdc-standby-failover.toml")).unwrap();
    let (sim, files) = run_with_pcap(&text, 2);
    let poor = sim.plan.paths.iter().position(|p| p.name == "poor").unwrap();
    let mut prio = Vec::new();
    for (k, f) in files.iter().enumerate() {
        for r in records(f) {
            let tcp = &r.data[20..];
            let thl = (tcp[12] >> 4) as usize * 4;
            for (kind, body) in options(&tcp[20..thl]) {
                if kind == 30 && body[0] >> 4 == 5 {
                    assert_eq!((body.len(), r.orig - 20 - thl, tcp[13]), (1, 0, 0x10), "a pure ACK with a 3-byte MP_PRIO");
                    prio.push((k, body[0] & 1, r.data[12..16].to_vec()));
                }
            }
        }
    }
    assert_eq!(prio, vec![(poor, 1, vec![10, 100, poor as u8, 1])], "one MP_PRIO, B set, from the client on the poor path");
}

/// A sink that takes `room` bytes, then fails like a full disk.
struct Full {
    room: usize,
}

impl Write for Full {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if b.len() > self.room {
            return Err(std::io::Error::other("no space left on device"));
        }
        self.room -= b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
}

#[test]
fn a_failing_sink_stops_only_its_own_capture_and_finish_names_its_path() {
    let sc = common::scenario_toml(&lossy_two_paths());
    let mut sim = build(&sc, None);
    sim.end = mptcplab_core::units::SimTime::from_secs(1);
    let ok = Shared::default();
    sim.attach_pcap(vec![Box::new(ok.clone()), Box::new(Full { room: 5000 })]);
    sim.run();
    let err = sim.finish_pcap().expect("attached").expect_err("the second sink failed");
    assert_eq!((err.path, err.error.to_string()), (1, "no space left on device".to_string()));
    let first = ok.0.lock().unwrap().clone();
    assert!(records(&first).len() > 500, "the other path's capture is whole");
}

/// The server's window scale from its SYN-ACKs and the scaled windows of its ACKs.
fn server_windows(file: &[u8]) -> (Vec<u8>, Vec<u32>) {
    let (mut scales, mut windows) = (Vec::new(), Vec::new());
    for r in records(file) {
        let ip = &r.data;
        if ip[12..16] != [10, 200, 0, 1] {
            continue;
        }
        let tcp = &ip[20..];
        let thl = (tcp[12] >> 4) as usize * 4;
        if tcp[13] & 0x02 != 0 {
            scales.extend(options(&tcp[20..thl]).into_iter().filter(|(k, _)| *k == 3).map(|(_, b)| b[0]));
        } else {
            windows.push(be16(&tcp[14..]) as u32);
        }
    }
    (scales, windows)
}

#[test]
fn the_server_announces_its_own_window_scale_and_its_acks_carry_the_window_to_that_unit() {
    // Linux 6.18 with SO_RCVBUF 200 KB (the kernel backend's capture of seed 001's
    // topology 1): the SYN-ACK says wscale 2, the ACKs' windows are the receiver's to
    // 4 bytes (199 852, 200 484, ...). Without a locked buffer, tcp_rmem[2] = 6 MiB: 7.
    let toml = |buffer: &str| {
        let run = "duration = \"3 s\"\n    profile = \"upstream\"";
        two_link_toml(run, ("5 Mbit/s", "10 ms", "100 pkt"), "", ("1 Mbit/s", "100 ms", "100 pkt"), buffer)
    };
    let (_, files) = run_with_pcap(&toml("receive_buffer = \"200 KB\""), 3);
    let (scales, windows) = server_windows(&files[0]);
    assert_eq!(scales, vec![2], "one SYN-ACK on pa");
    let bytes: Vec<u32> = windows.iter().map(|w| w << 2).collect();
    assert!(bytes.iter().all(|&b| b <= 201_276), "at most the empty buffer's window");
    assert!(bytes.iter().any(|&b| b % 128 != 0), "finer than the 128-byte unit of scale 7");
    let (_, files) = run_with_pcap(&toml(""), 1);
    assert_eq!(server_windows(&files[0]).0, vec![7]);
}
