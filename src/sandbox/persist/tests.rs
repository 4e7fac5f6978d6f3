use super::*;
use crate::sandbox::store::IntegrationRecord;

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A write as `App::write_blocking` makes it.
fn write(db: &StateDb, state: &mut State, f: impl FnOnce(&mut State)) {
    let rec = begin(state);
    f(state);
    let seq = db.stage(state, &rec).unwrap();
    finish(state);
    if let Some(seq) = seq {
        db.persist(seq).unwrap();
    }
}

/// A write made in memory and queued, not yet committed.
fn stage(db: &StateDb, state: &mut State, f: impl FnOnce(&mut State)) -> u64 {
    let rec = begin(state);
    f(state);
    let seq = db.stage(state, &rec).unwrap().unwrap();
    finish(state);
    seq
}

fn json(state: &State) -> serde_json::Value {
    serde_json::to_value(state).unwrap()
}

/// Every byte of the database (the file and its write-ahead log).
fn bytes_of(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    bytes.extend(std::fs::read(wal_path(path)).unwrap_or_default());
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// An integration whose settings hold `canary` (as an Authorization header).
fn integration(canary: &str) -> IntegrationRecord {
    serde_json::from_value(serde_json::json!({
        "id": format!("id-{}", canary.len()),
        "user_id": "u",
        "provider": "azure",
        "name": "azure",
        "created_at": "t",
        "updated_at": "t",
        "fields": {"endpoint": "https://a.example.com", "default_headers": {"Authorization": format!("Bearer {canary}")}},
        "secret_fingerprint": format!("fp-{canary}"),
        "secret_updated_at": "t",
    }))
    .unwrap()
}

#[test]
fn writes_survive_a_reopen_and_the_file_is_a_sqlite_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let (db, mut state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    write(&db, &mut state, |s| s.projects[0].name = "renamed".into());
    write(&db, &mut state, |s| s.favorites.clear());
    write(&db, &mut state, |s| {
        s.organization.name = "Other org".into();
        let gone = s.log_streams[1].id.clone();
        s.log_streams.retain(|l| l.id != gone);
        s.dashboards.sort_by(|a, b| b.name.cmp(&a.name));
    });
    // A write that changes nothing commits nothing.
    let rec = begin(&mut state);
    assert_eq!(db.stage(&mut state, &rec).unwrap(), None);
    finish(&mut state);
    // Readable by SQLite while the sandbox has it open.
    let reader = Connection::open(&path).unwrap();
    let name: String = reader
        .query_row("SELECT name FROM projects ORDER BY row LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(name, "renamed");
    drop(reader);
    drop(db);
    assert!(std::fs::read(&path).unwrap().starts_with(SQLITE_HEADER));
    let (_db, back) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(json(&back), json(&state));
    assert_eq!(back.organization.name, "Other org");
}

#[test]
fn a_failed_write_is_read_back_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let (db, mut state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    write(&db, &mut state, |s| s.projects[1].name = "kept".into());
    let before = json(&state);
    for f in [
        (|s: &mut State| {
            s.projects[0].name = "changed".into();
            s.projects.remove(1);
            let first = s.users[0].clone();
            s.users.push(first);
            s.favorites.retain(|_| false);
            s.salt = "other".into();
        }) as fn(&mut State),
        |s| s.log_streams.iter_mut().for_each(|l| l.name.push('!')),
        |s| s.scorers = Records::new(),
        |s| *s = Fixture::demo().into_state(),
    ] {
        let rec = begin(&mut state);
        f(&mut state);
        db.restore(&mut state, rec).unwrap();
        finish(&mut state);
        assert_eq!(json(&state), before);
    }
    // And what was restored is written normally by the next write.
    write(&db, &mut state, |s| s.projects[0].name = "after".into());
    drop(db);
    let (_db, back) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(json(&back), json(&state));
}

#[test]
fn a_second_user_of_the_file_is_refused_and_leftovers_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let (db, _) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert!(matches!(
        StateDb::open(&path, Fixture::demo(), None),
        Err(SandboxError::StateInUse { .. })
    ));
    drop(db);
    std::fs::write(dir.path().join("s.db.migrating"), b"half a migration").unwrap();
    let (db, _) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    drop(db);
    assert_eq!(files(dir.path()), vec!["s.db", "s.db.key"]);
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn secrets_at_rest_are_sealed_and_the_rest_is_queryable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let (db, mut state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    let fingerprint = match &state.users[0].api_keys[..] {
        [crate::sandbox::store::Credential::Sealed(fp), ..] => fp.clone(),
        other => panic!("{other:?}"),
    };
    write(&db, &mut state, |s| {
        s.integrations.push(integration("CANARY-one"));
    });
    write(&db, &mut state, |s| {
        s.integrations.push(integration("CANARY-second"));
        s.integrations.remove(0);
    });
    let bytes = bytes_of(&path);
    assert!(
        !contains(&bytes, "CANARY"),
        "an integration's settings in the clear"
    );
    assert!(
        !contains(&bytes, &fingerprint),
        "a credential's fingerprint in the clear"
    );
    let reader = Connection::open(&path).unwrap();
    let (provider, id, sealed): (String, String, String) = reader
        .query_row("SELECT provider, id, sealed FROM integrations", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((provider.as_str(), id.as_str()), ("azure", "id-13"));
    assert!(sealed.starts_with("sealed:v2:"), "{sealed}");
    drop(reader);
    #[cfg(unix)]
    {
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("state.db.key")), 0o600);
        assert_eq!(mode(&wal_path(&path)), 0o600);
    }
    drop(db);
    assert!(!contains(&bytes_of(&path), "CANARY"));
    let (db, back) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(json(&back), json(&state));
    assert!(
        serde_json::to_string(&back)
            .unwrap()
            .contains("Bearer CANARY-second")
    );
    drop(db);
    // Without its key the file is refused, and says why.
    std::fs::remove_file(dir.path().join("state.db.key")).unwrap();
    let err = StateDb::open(&path, Fixture::demo(), None).unwrap_err();
    assert!(matches!(err, SandboxError::StateKey { .. }), "{err}");
    assert!(
        err.to_string().contains("state.db.key, which is missing"),
        "{err}"
    );
}

#[test]
fn a_file_readable_by_all_is_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    drop(StateDb::open(&path, Fixture::demo(), None).unwrap());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(StateDb::open(&path, Fixture::demo(), None).unwrap());
        assert_eq!(mode(&path), 0o600);
    }
}

/// A journal written by the sandbox of the previous version (`evalctl
/// sandbox --state`, then a metric settings change, two sections created
/// and the first deleted, an Azure integration with an Authorization
/// header and a Mistral one), with its key.
const JOURNAL: &[u8] = include_bytes!("testdata/journal-v1.state");
const JOURNAL_KEY: &[u8] = include_bytes!("testdata/journal-v1.state.key");

fn integration_names(state: &State) -> Vec<&str> {
    state.integrations.iter().map(|i| i.name.as_str()).collect()
}

#[test]
fn a_journal_of_the_previous_version_is_migrated_and_kept_beside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sandbox.json");
    // One more write of that version (a removal) and one cut short.
    let mut bytes = JOURNAL.to_vec();
    bytes.extend(b"{\"seq\":7,\"ops\":[{\"c\":\"integrations\",\"op\":\"remove\",\"at\":[1]}]}\n");
    bytes.extend(b"{\"seq\":8,\"ops\":[{\"c\":\"integrations\",\"op\":\"all\",\"v\":[]");
    std::fs::write(&path, &bytes).unwrap();
    std::fs::write(dir.path().join("sandbox.json.key"), JOURNAL_KEY).unwrap();
    let (db, state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(integration_names(&state), ["azure"]);
    let azure = &state.integrations[0];
    assert_eq!(
        azure.fields["default_headers"]["Authorization"],
        "Bearer CANARY-header"
    );
    let production = state
        .log_streams
        .iter()
        .find(|l| l.name == "production")
        .unwrap();
    let settings = serde_json::to_value(&production.metric_settings).unwrap();
    assert_eq!(settings["segment_filters"][0]["sample_rate"], 0.25);
    let dashboard = state
        .dashboards
        .iter()
        .find(|d| d.log_stream_id == production.id)
        .unwrap();
    let sections: Vec<&str> = dashboard.sections.iter().map(|s| s.name.as_str()).collect();
    assert!(
        sections.contains(&"migrated-b") && !sections.contains(&"migrated-a"),
        "{sections:?}"
    );
    drop(db);
    assert_eq!(
        std::fs::read(dir.path().join("sandbox.json.pre-sqlite")).unwrap(),
        bytes
    );
    assert!(std::fs::read(&path).unwrap().starts_with(SQLITE_HEADER));
    assert!(!contains(&bytes_of(&path), "CANARY"));
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        files(dir.path()),
        vec![
            "sandbox.json",
            "sandbox.json.key",
            "sandbox.json.pre-sqlite"
        ]
    );
    // Opened again: the database, as migrated, with the demo credentials.
    let (_db, again) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(json(&again), json(&state));
    assert!(crate::sandbox::auth::user_by_api_key(&again, "demo-api-key").is_some());
}

#[test]
fn a_journal_without_its_key_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sandbox.json");
    std::fs::write(&path, JOURNAL).unwrap();
    let err = StateDb::open(&path, Fixture::demo(), None).unwrap_err();
    assert!(err.to_string().contains("which is missing"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), JOURNAL);
    assert_eq!(files(dir.path()), vec!["sandbox.json"]);
}

#[test]
fn a_state_document_of_the_version_before_the_journal_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.json");
    let mut old = Fixture::demo().into_state();
    old.projects[0].name = "from the old file".into();
    old.integrations.push(integration("CANARY-clear"));
    std::fs::write(&path, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
    let (db, state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(state.projects[0].name, "from the old file");
    assert_eq!(json(&state), json(&old));
    drop(db);
    assert!(!contains(&bytes_of(&path), "CANARY"));
    let (_db, again) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(again.projects[0].name, "from the old file");
}

#[test]
fn queued_writes_are_committed_together_and_a_refused_write_does_not_undo_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let (db, mut state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    let first = stage(&db, &mut state, |s| s.projects[0].name = "first".into());
    let second = stage(&db, &mut state, |s| s.projects[1].name = "second".into());
    // A write the store refuses after touching the row of a queued write:
    // what is read back is the queued write's row, not the file's older one.
    let rec = begin(&mut state);
    state.projects[0].name = "refused".into();
    db.restore(&mut state, rec).unwrap();
    finish(&mut state);
    assert_eq!(state.projects[0].name, "first");
    // One transaction committed both: the second's commit covers the first.
    db.persist(second).unwrap();
    db.persist(first).unwrap();
    drop(db);
    let (_db, back) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    assert_eq!(json(&back), json(&state));
    assert_eq!(back.projects[1].name, "second");
}

#[test]
fn writes_a_failed_transaction_lost_are_read_back_and_later_writes_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let (db, mut state) = StateDb::open(&path, Fixture::demo(), None).unwrap();
    write(&db, &mut state, |s| s.projects[1].name = "kept".into());
    let kept = json(&state);
    // Another user of the file makes every write to projects fail.
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON projects BEGIN SELECT RAISE(ABORT, 'refused'); END;",
        )
        .unwrap();
    let lost = stage(&db, &mut state, |s| {
        s.projects[0].name = "lost".into();
        s.organization.name = "Lost org".into();
    });
    let queued = stage(&db, &mut state, |s| {
        s.log_streams.remove(0);
    });
    let failed = db.persist(lost).unwrap_err();
    assert!(failed.to_string().contains("refused"), "{failed}");
    // Every write after it is refused, the queued one included.
    assert!(matches!(
        db.persist(queued),
        Err(PersistError::Broken { .. })
    ));
    db.recover(&mut state);
    assert_eq!(json(&state), kept);
    let rec = begin(&mut state);
    state.projects[0].name = "after".into();
    assert!(matches!(
        db.stage(&mut state, &rec),
        Err(PersistError::Broken { .. })
    ));
}

#[test]
fn the_write_ahead_log_is_truncated_after_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    // A first start of a large state writes every row in one transaction.
    let (db, mut state) = StateDb::open(&path, Fixture::scaled(60, 40, 2), None).unwrap();
    let wal = wal_path(&path);
    let first = std::fs::metadata(&wal).unwrap().len();
    assert!(
        first > WAL_LIMIT,
        "the first start wrote {first} bytes of log"
    );
    // Writes after it: SQLite checkpoints the log, then starts it again
    // from the beginning, truncated to the limit.
    for i in 0..50 {
        write(&db, &mut state, |s| s.projects[0].name = format!("p{i}"));
    }
    let after = std::fs::metadata(&wal).unwrap().len();
    assert!(
        after <= WAL_LIMIT,
        "{after} bytes of log after the checkpoint"
    );
}
