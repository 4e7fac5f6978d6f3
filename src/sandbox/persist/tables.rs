//! The tables of the state database: one per collection of the [`State`],
//! listed once in [`tables`], plus `meta` for the fields that are not
//! collections (`salt`, `organization`).
//!
//! A collection's table has a row per record: `row` (its row id, which
//! orders the collection), `body` (the record as JSON, less its sealed
//! fields), `sealed` (those fields, sealed: see `seal`), and columns
//! generated from the body that a user's queries need (`id`, `name`, ...;
//! virtual: computed when read, never stored twice).
//!
//! **Adding a collection** is a field of `State` of type `Records<T>` (T:
//! `Serialize + DeserializeOwned`), one [`TableDef`] constant and one line in
//! [`tables`] (which destructures `State` without `..`: a field added to
//! `State` does not compile until it is listed, so nothing the sandbox holds
//! can be left out of the file). A kind's collection is a field of the
//! sandbox registry's `KindRecords` instead, its [`TableDef`] in the kind's
//! folder and its line in `KindRecords::tables` (which destructures the same
//! way). A database of an earlier version gets the new table, empty, when it
//! is opened.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::DbError;
use super::records::{Pending, Records};
use super::seal::Sealer;
use crate::sandbox::store::{Organization, State};

/// A collection's table.
#[derive(Debug)]
pub struct TableDef {
    /// The table's name (the `State` field's).
    pub name: &'static str,
    /// Columns generated from the body for queries: name and JSON path.
    pub columns: &'static [(&'static str, &'static str)],
    /// Top-level fields of a record kept sealed in the `sealed` column.
    pub sealed: &'static [&'static str],
}

const USERS: TableDef = TableDef {
    name: "users",
    columns: &[("id", "$.id"), ("email", "$.email"), ("role", "$.role")],
    sealed: &["password", "api_keys"],
};
const PROJECTS: TableDef = TableDef {
    name: "projects",
    columns: &[("id", "$.id"), ("name", "$.name"), ("type", "$.type")],
    sealed: &[],
};
const LOG_STREAMS: TableDef = TableDef {
    name: "log_streams",
    columns: &[
        ("id", "$.id"),
        ("project_id", "$.project_id"),
        ("name", "$.name"),
    ],
    sealed: &[],
};
const EXPERIMENTS: TableDef = TableDef {
    name: "experiments",
    columns: &[
        ("id", "$.id"),
        ("project_id", "$.project_id"),
        ("name", "$.name"),
    ],
    sealed: &[],
};
const SCORERS: TableDef = TableDef {
    name: "scorers",
    columns: &[
        ("id", "$.id"),
        ("name", "$.name"),
        ("scorer_type", "$.scorer_type"),
    ],
    sealed: &[],
};
const DASHBOARDS: TableDef = TableDef {
    name: "dashboards",
    columns: &[
        ("id", "$.id"),
        ("project_id", "$.project_id"),
        ("log_stream_id", "$.log_stream_id"),
        ("name", "$.name"),
    ],
    sealed: &[],
};
const ANNOTATION_TEMPLATES: TableDef = TableDef {
    name: "annotation_templates",
    columns: &[
        ("id", "$.template.id"),
        ("project_id", "$.project_id"),
        ("name", "$.template.name"),
    ],
    sealed: &[],
};
const FEEDBACK_TEMPLATES: TableDef = TableDef {
    name: "feedback_templates",
    columns: &[
        ("id", "$.template.id"),
        ("project_id", "$.project_id"),
        ("name", "$.template.name"),
    ],
    sealed: &[],
};
const INTEGRATIONS: TableDef = TableDef {
    name: "integrations",
    columns: &[
        ("id", "$.id"),
        ("user_id", "$.user_id"),
        ("provider", "$.provider"),
        ("name", "$.name"),
    ],
    sealed: &["fields", "secret_fingerprint"],
};
const FAVORITES: TableDef = TableDef {
    name: "favorites",
    columns: &[
        ("log_stream_id", "$.log_stream_id"),
        ("dashboard_id", "$.dashboard_id"),
        ("user_id", "$.user_id"),
    ],
    sealed: &[],
};

/// Every part of the state.
pub struct Tables<'a> {
    /// The salt of fingerprints (in `meta`).
    pub salt: &'a mut String,
    /// The organization (in `meta`).
    pub organization: &'a mut Organization,
    /// The collections, each with its table.
    pub collections: Vec<(&'static TableDef, &'a mut dyn Table)>,
}

/// Every part of `state`, with its table.
pub fn tables(state: &mut State) -> Tables<'_> {
    // No `..`: see the module docs.
    let State {
        salt,
        organization,
        users,
        projects,
        log_streams,
        experiments,
        scorers,
        dashboards,
        annotation_templates,
        feedback_templates,
        integrations,
        favorites,
        kinds,
    } = state;
    let mut collections: Vec<(&'static TableDef, &mut dyn Table)> = vec![
        (&USERS, users),
        (&PROJECTS, projects),
        (&LOG_STREAMS, log_streams),
        (&EXPERIMENTS, experiments),
        (&SCORERS, scorers),
        (&DASHBOARDS, dashboards),
        (&ANNOTATION_TEMPLATES, annotation_templates),
        (&FEEDBACK_TEMPLATES, feedback_templates),
        (&INTEGRATIONS, integrations),
        (&FAVORITES, favorites),
    ];
    collections.extend(kinds.tables());
    Tables {
        salt,
        organization,
        collections,
    }
}

/// The statements creating the schema (each table when missing).
pub fn schema(defs: &[&TableDef]) -> String {
    let mut sql = String::from(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n",
    );
    for def in defs {
        sql.push_str(&format!(
            "CREATE TABLE IF NOT EXISTS {} (\n  row INTEGER PRIMARY KEY,\n",
            def.name
        ));
        for (column, path) in def.columns {
            sql.push_str(&format!(
                "  {column} TEXT GENERATED ALWAYS AS (json_extract(body, '{path}')) VIRTUAL,\n"
            ));
        }
        sql.push_str("  body TEXT NOT NULL,\n  sealed TEXT\n);\n");
    }
    sql
}

/// How rows are sealed and opened: the key, made when first needed.
pub trait Keys {
    /// The key, to seal (made and written when there is none).
    fn to_seal(&self) -> Result<std::sync::Arc<Sealer>, DbError>;
    /// The key, to open (`None`: there is none).
    fn to_open(&self) -> Option<std::sync::Arc<Sealer>>;
}

/// A collection, whatever its element type.
pub trait Table {
    /// Starts noting what a write touches.
    fn begin(&mut self);
    /// Stops noting.
    fn finish(&mut self);
    /// Whether the write under way touched anything.
    fn changed(&self) -> bool;
    /// What the write touched (see `Records`), as the row writes that
    /// save it, appended to `out`.
    fn changes(
        &self,
        def: &'static TableDef,
        keys: &dyn Keys,
        out: &mut Vec<RowWrite>,
    ) -> Result<(), DbError>;
    /// Writes every record (the table being empty).
    fn save_all(&self, def: &TableDef, db: &Connection, keys: &dyn Keys) -> Result<(), DbError>;
    /// Reads every record.
    fn load(&mut self, def: &TableDef, db: &Connection, keys: &dyn Keys) -> Result<(), DbError>;
    /// Reads back from the table what the write touched.
    fn restore(&mut self, def: &TableDef, db: &Connection, keys: &dyn Keys) -> Result<(), DbError>;
    /// Reads back from the table these rows (`None`: every row).
    fn reload(
        &mut self,
        def: &TableDef,
        db: &Connection,
        keys: &dyn Keys,
        rows: Option<&BTreeSet<i64>>,
    ) -> Result<(), DbError>;
}

/// One change to the database, made under the state's lock and written
/// later, with the writes queued before it, in one transaction (see
/// `StateDb::persist`).
#[derive(Debug)]
pub enum RowWrite {
    /// A row as it now is.
    Upsert {
        /// The table.
        table: &'static TableDef,
        /// The row id.
        row: i64,
        /// The record, without its sealed fields, as JSON.
        body: String,
        /// The sealed fields.
        sealed: Option<String>,
    },
    /// A row removed.
    Delete {
        /// The table.
        table: &'static TableDef,
        /// The row id.
        row: i64,
    },
    /// Every row removed (before the table is written whole).
    Clear {
        /// The table.
        table: &'static TableDef,
    },
    /// A `meta` value, as JSON.
    Meta {
        /// Its key.
        key: &'static str,
        /// Its value.
        value: String,
    },
}

impl RowWrite {
    /// A `meta` value to write.
    pub fn meta<T: Serialize>(key: &'static str, value: &T) -> Result<RowWrite, DbError> {
        let value = serde_json::to_string(value).map_err(DbError::Record)?;
        Ok(RowWrite::Meta { key, value })
    }

    /// Writes it in `db`.
    pub fn write(&self, db: &Connection) -> Result<(), DbError> {
        match self {
            RowWrite::Upsert {
                table,
                row,
                body,
                sealed,
            } => db
                .prepare_cached(&format!(
                    "INSERT OR REPLACE INTO {} (row, body, sealed) VALUES (?1, ?2, ?3)",
                    table.name
                ))
                .and_then(|mut s| s.execute(params![row, body, sealed])),
            RowWrite::Delete { table, row } => db
                .prepare_cached(&format!("DELETE FROM {} WHERE row = ?1", table.name))
                .and_then(|mut s| s.execute([row])),
            RowWrite::Clear { table } => db.execute(&format!("DELETE FROM {}", table.name), []),
            RowWrite::Meta { key, value } => db
                .prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
                .and_then(|mut s| s.execute(params![key, value])),
        }
        .map(|_| ())
        .map_err(sql)
    }
}

fn sql(e: rusqlite::Error) -> DbError {
    DbError::Sql(e)
}

/// A record as its row: the body and the sealed text.
fn to_row<T: Serialize>(
    def: &TableDef,
    item: &T,
    keys: &dyn Keys,
) -> Result<(String, Option<String>), DbError> {
    let mut value = serde_json::to_value(item).map_err(DbError::Record)?;
    let mut sealed = Map::new();
    if let Value::Object(body) = &mut value {
        for field in def.sealed {
            if let Some(v) = body.remove(*field) {
                sealed.insert((*field).to_owned(), v);
            }
        }
    }
    let sealed = if sealed.is_empty() {
        None
    } else {
        Some(keys.to_seal()?.seal(def.name, &sealed)?)
    };
    Ok((value.to_string(), sealed))
}

/// A row as its record.
fn from_row<T: DeserializeOwned>(
    def: &TableDef,
    body: &str,
    sealed: Option<&str>,
    keys: &dyn Keys,
) -> Result<T, DbError> {
    let mut value: Value = serde_json::from_str(body).map_err(DbError::Record)?;
    if let Some(sealed) = sealed {
        let fields = keys
            .to_open()
            .ok_or(DbError::NoKey)?
            .open(def.name, sealed)
            .ok_or(DbError::OtherKey)?;
        if let Value::Object(body) = &mut value {
            body.extend(fields);
        }
    }
    serde_json::from_value(value).map_err(DbError::Record)
}

fn upsert<T: Serialize>(
    def: &TableDef,
    db: &Connection,
    keys: &dyn Keys,
    row: i64,
    item: &T,
) -> Result<(), DbError> {
    let (body, sealed) = to_row(def, item, keys)?;
    db.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {} (row, body, sealed) VALUES (?1, ?2, ?3)",
        def.name
    ))
    .and_then(|mut s| s.execute(params![row, body, sealed]))
    .map_err(sql)?;
    Ok(())
}

impl<T: Serialize + DeserializeOwned> Table for Records<T> {
    fn begin(&mut self) {
        Records::begin(self);
    }

    fn finish(&mut self) {
        Records::finish(self);
    }

    fn changed(&self) -> bool {
        match self.pending() {
            Pending::Rows(rows) => !rows.is_empty(),
            Pending::Whole => true,
        }
    }

    fn changes(
        &self,
        def: &'static TableDef,
        keys: &dyn Keys,
        out: &mut Vec<RowWrite>,
    ) -> Result<(), DbError> {
        let upsert = |row: i64, item: &T| -> Result<RowWrite, DbError> {
            let (body, sealed) = to_row(def, item, keys)?;
            Ok(RowWrite::Upsert {
                table: def,
                row,
                body,
                sealed,
            })
        };
        match self.pending() {
            Pending::Rows(rows) => {
                for &row in rows {
                    out.push(match self.by_row(row) {
                        Some(item) => upsert(row, item)?,
                        None => RowWrite::Delete { table: def, row },
                    });
                }
            }
            Pending::Whole => {
                out.push(RowWrite::Clear { table: def });
                for (row, item) in self.rows() {
                    out.push(upsert(row, item)?);
                }
            }
        }
        Ok(())
    }

    fn save_all(&self, def: &TableDef, db: &Connection, keys: &dyn Keys) -> Result<(), DbError> {
        for (row, item) in self.rows() {
            upsert(def, db, keys, row, item)?;
        }
        Ok(())
    }

    fn load(&mut self, def: &TableDef, db: &Connection, keys: &dyn Keys) -> Result<(), DbError> {
        let mut stmt = db
            .prepare(&format!(
                "SELECT row, body, sealed FROM {} ORDER BY row",
                def.name
            ))
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(sql)? {
            let row: i64 = r.get(0).map_err(sql)?;
            let body: String = r.get(1).map_err(sql)?;
            let sealed: Option<String> = r.get(2).map_err(sql)?;
            let item = from_row(def, &body, sealed.as_deref(), keys).map_err(|e| DbError::Row {
                table: def.name,
                row,
                reason: Box::new(e),
            })?;
            out.push((row, item));
        }
        *self = Records::from_rows(out);
        Ok(())
    }

    fn restore(&mut self, def: &TableDef, db: &Connection, keys: &dyn Keys) -> Result<(), DbError> {
        let rows = match self.pending() {
            Pending::Rows(rows) => rows.clone(),
            Pending::Whole => return self.load(def, db, keys),
        };
        self.reload(def, db, keys, Some(&rows))
    }

    fn reload(
        &mut self,
        def: &TableDef,
        db: &Connection,
        keys: &dyn Keys,
        rows: Option<&BTreeSet<i64>>,
    ) -> Result<(), DbError> {
        let Some(rows) = rows else {
            return self.load(def, db, keys);
        };
        for &row in rows {
            let found: Option<(String, Option<String>)> = db
                .prepare_cached(&format!(
                    "SELECT body, sealed FROM {} WHERE row = ?1",
                    def.name
                ))
                .and_then(|mut s| {
                    s.query_row([row], |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()
                })
                .map_err(sql)?;
            let item = match found {
                Some((body, sealed)) => Some(from_row(def, &body, sealed.as_deref(), keys)?),
                None => None,
            };
            self.restore_row(row, item);
        }
        Ok(())
    }
}

/// Reads `meta`'s `key` as JSON.
pub fn meta<T: DeserializeOwned>(db: &Connection, key: &str) -> Result<Option<T>, DbError> {
    let text: Option<String> = db
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .map_err(sql)?;
    text.map(|t| serde_json::from_str(&t).map_err(DbError::Record))
        .transpose()
}

/// Writes `meta`'s `key` as JSON.
pub fn set_meta<T: Serialize>(db: &Connection, key: &str, value: &T) -> Result<(), DbError> {
    let text = serde_json::to_string(value).map_err(DbError::Record)?;
    db.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![key, text]))
        .map_err(sql)?;
    Ok(())
}
