//! Enumerations of the service, as tolerant string enums.
//!
//! Every enumeration of the spec is a Rust enum with one variant per documented
//! value and an `Unknown(String)` variant. Reading is tolerant (the live service
//! grows: a value added tomorrow must not break `evalctl plan` today) and
//! lossless (an unknown value read from the service is written back unchanged).
//! Strictness lives where it belongs: the manifest schema and the sandbox's
//! request validation list only the documented values.

/// Declares a string enumeration with a tolerant `Unknown` variant.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* #[doc = concat!("`", $value, "`")] $variant, )+
            /// A value this version of evalctl does not know (kept verbatim).
            Unknown(String),
        }

        impl $name {
            /// Every documented value, in the spec's order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant ),+ ];

            /// The wire spelling of the value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $value, )+
                    $name::Unknown(other) => other.as_str(),
                }
            }

            /// The documented wire spellings, in the spec's order.
            pub fn documented_values() -> Vec<&'static str> {
                vec![ $( $value ),+ ]
            }

            /// Whether the value is one the spec documents.
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Unknown(_))
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(match s {
                    $( $value => $name::$variant, )+
                    other => $name::Unknown(other.to_owned()),
                })
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s.parse() {
                    Ok(v) => v,
                    Err(never) => match never {},
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Ok($name::from(s.as_ref()))
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "enum": [ $( $value ),+ ],
                })
            }
        }
    };
}

string_enum! {
    /// Kind of a scorer (`ScorerTypes`).
    ScorerType { Llm = "llm", Code = "code", Luna = "luna", Preset = "preset" }
}

string_enum! {
    /// Model tier of a scorer (`ModelType`): `slm` is the small-model tier, `llm` the large.
    ModelType { Slm = "slm", Llm = "llm", Code = "code" }
}

string_enum! {
    /// Output type of a model-based scorer (`OutputTypeEnum`).
    OutputType {
        Boolean = "boolean",
        Categorical = "categorical",
        Count = "count",
        Discrete = "discrete",
        Freeform = "freeform",
        Percentage = "percentage",
        Multilabel = "multilabel",
        RetrievedChunkListBoolean = "retrieved_chunk_list_boolean",
        BooleanMultilabel = "boolean_multilabel",
    }
}

string_enum! {
    /// Input type of a model-based scorer (`InputTypeEnum`).
    InputType {
        Basic = "basic",
        LlmSpans = "llm_spans",
        RetrieverSpans = "retriever_spans",
        SessionsNormalized = "sessions_normalized",
        SessionsTraceIoOnly = "sessions_trace_io_only",
        ToolSpans = "tool_spans",
        TraceInputOnly = "trace_input_only",
        TraceIoOnly = "trace_io_only",
        TraceNormalized = "trace_normalized",
        TraceOutputOnly = "trace_output_only",
        AgentSpans = "agent_spans",
        WorkflowSpans = "workflow_spans",
    }
}

string_enum! {
    /// A capability a multimodal scorer may use (`MultimodalCapability`).
    MultimodalCapability { Vision = "vision", Audio = "audio" }
}

string_enum! {
    /// How a metric is rolled up the session/trace/span hierarchy (`RollUpMethodDisplayOptions`).
    RollUpMethod {
        Average = "average",
        Sum = "sum",
        Max = "max",
        Min = "min",
        CategoryCount = "category_count",
        PercentageTrue = "percentage_true",
        PercentageFalse = "percentage_false",
    }
}

string_enum! {
    /// Input type of a fine-tuned (Luna) scorer (`LunaInputTypeEnum`).
    LunaInputType { Span = "span", TraceObject = "trace_object", TraceInputOutputOnly = "trace_input_output_only" }
}

string_enum! {
    /// Output type of a fine-tuned (Luna) scorer (`LunaOutputTypeEnum`).
    LunaOutputType { Float = "float", String = "string", StringList = "string_list", BoolList = "bool_list" }
}

string_enum! {
    /// How a user authenticates (`auth_method`).
    AuthMethod {
        Email = "email",
        Google = "google",
        Github = "github",
        Okta = "okta",
        AzureAd = "azure-ad",
        Custom = "custom",
        Saml = "saml",
        Invite = "invite",
    }
}

string_enum! {
    /// A user's role in the organization.
    UserRole { Admin = "admin", Manager = "manager", User = "user", ReadOnly = "read_only" }
}

string_enum! {
    /// A model provider of an integration (`IntegrationProvider`, twelve values).
    IntegrationProvider {
        Anthropic = "anthropic",
        AwsBedrock = "aws_bedrock",
        AwsSagemaker = "aws_sagemaker",
        Azure = "azure",
        Custom = "custom",
        Databricks = "databricks",
        Mistral = "mistral",
        Nvidia = "nvidia",
        Openai = "openai",
        VegasGateway = "vegas_gateway",
        VertexAi = "vertex_ai",
        Writer = "writer",
    }
}

string_enum! {
    /// Who a trends dashboard (or a favorite of it) is for.
    Visibility { User = "user", Project = "project" }
}

string_enum! {
    /// Chart type of a trends widget.
    WidgetType { BarChart = "bar_chart", LineChart = "line_chart", Number = "number", Table = "table" }
}

string_enum! {
    /// Aggregation of a trends widget.
    MetricAggregation {
        Count = "Count",
        Sum = "Sum",
        Average = "Average",
        Min = "Min",
        Max = "Max",
        P50 = "P50",
        P90 = "P90",
        P95 = "P95",
        P99 = "P99",
        PercentageFalse = "PercentageFalse",
        PercentageTrue = "PercentageTrue",
    }
}

string_enum! {
    /// Kind of a log-records filter: the `type` tag of a leaf of a trends
    /// dashboard's filter tree (`LogRecords*Filter` of the reference).
    LogRecordsFilterType {
        Id = "id",
        Date = "date",
        Number = "number",
        Boolean = "boolean",
        Collection = "collection",
        Text = "text",
        FullyAnnotated = "fully_annotated",
    }
}

string_enum! {
    /// Operator of a log-records filter (each filter kind allows a subset).
    LogRecordsOperator {
        Eq = "eq",
        Ne = "ne",
        Gt = "gt",
        Gte = "gte",
        Lt = "lt",
        Lte = "lte",
        Between = "between",
        Contains = "contains",
        OneOf = "one_of",
        NotIn = "not_in",
    }
}

string_enum! {
    /// A content modality, the values of a modality filter.
    ContentModality { Text = "text", Document = "document", Image = "image", Audio = "audio", Video = "video" }
}

string_enum! {
    /// Type of a project.
    ProjectType { PromptEvaluation = "prompt_evaluation", LlmMonitor = "llm_monitor", Protect = "protect", GenAi = "gen_ai" }
}

string_enum! {
    /// Comparison operator of a filter. Each filter kind accepts a subset, listed
    /// where that filter is defined.
    Operator {
        Eq = "eq",
        Ne = "ne",
        Contains = "contains",
        OneOf = "one_of",
        NotIn = "not_in",
        Gt = "gt",
        Gte = "gte",
        Lt = "lt",
        Lte = "lte",
        Between = "between",
    }
}

string_enum! {
    /// The 63 preset scorer names of the spec (`ScorerName`).
    ScorerName {
        ActionCompletionLuna = "action_completion_luna",
        ActionAdvancementLuna = "action_advancement_luna",
        AgenticSessionSuccess = "agentic_session_success",
        AgenticWorkflowSuccess = "agentic_workflow_success",
        AgentEfficiency = "agent_efficiency",
        AgentFlow = "agent_flow",
        Bleu = "bleu",
        ChunkAttributionUtilizationLuna = "chunk_attribution_utilization_luna",
        ChunkAttributionUtilization = "chunk_attribution_utilization",
        ChunkRelevance = "chunk_relevance",
        ChunkRelevanceLuna = "chunk_relevance_luna",
        ContextPrecision = "context_precision",
        PrecisionAtK = "precision_at_k",
        CompletenessLuna = "completeness_luna",
        Completeness = "completeness",
        ContextAdherence = "context_adherence",
        ContextAdherenceLuna = "context_adherence_luna",
        ContextAdherenceVision = "context_adherence_vision",
        ContextAdherenceAudio = "context_adherence_audio",
        ContextRelevance = "context_relevance",
        ContextRelevanceLuna = "context_relevance_luna",
        ConversationQuality = "conversation_quality",
        Correctness = "correctness",
        GroundTruthAdherence = "ground_truth_adherence",
        VisualFidelity = "visual_fidelity",
        VisualQuality = "visual_quality",
        InputPii = "input_pii",
        InputPiiGpt = "input_pii_gpt",
        InputSexist = "input_sexist",
        InputSexistLuna = "input_sexist_luna",
        InputTone = "input_tone",
        InputToneGpt = "input_tone_gpt",
        InputToxicity = "input_toxicity",
        InputToxicityLuna = "input_toxicity_luna",
        InputToxicityVision = "input_toxicity_vision",
        InputToxicityAudio = "input_toxicity_audio",
        InstructionAdherence = "instruction_adherence",
        OutputPii = "output_pii",
        OutputPiiGpt = "output_pii_gpt",
        OutputSexist = "output_sexist",
        OutputSexistLuna = "output_sexist_luna",
        OutputTone = "output_tone",
        OutputToneGpt = "output_tone_gpt",
        OutputToxicity = "output_toxicity",
        OutputToxicityLuna = "output_toxicity_luna",
        OutputToxicityVision = "output_toxicity_vision",
        OutputToxicityAudio = "output_toxicity_audio",
        PromptInjection = "prompt_injection",
        PromptInjectionLuna = "prompt_injection_luna",
        PromptPerplexity = "prompt_perplexity",
        Rouge = "rouge",
        ReasoningCoherence = "reasoning_coherence",
        SqlEfficiency = "sql_efficiency",
        SqlAdherence = "sql_adherence",
        SqlInjection = "sql_injection",
        SqlCorrectness = "sql_correctness",
        ToolErrorRate = "tool_error_rate",
        ToolErrorRateLuna = "tool_error_rate_luna",
        ToolSelectionQuality = "tool_selection_quality",
        ToolSelectionQualityLuna = "tool_selection_quality_luna",
        Uncertainty = "uncertainty",
        UserIntentChange = "user_intent_change",
        InterruptionDetection = "interruption_detection",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scorer_names_are_the_spec_s_63() {
        assert_eq!(ScorerName::ALL.len(), 63);
        let mut names = ScorerName::documented_values();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 63, "no duplicates");
    }

    #[test]
    fn unknown_values_round_trip_verbatim() {
        let v: InputType = serde_json::from_str("\"brand_new_input\"").unwrap();
        assert_eq!(v, InputType::Unknown("brand_new_input".into()));
        assert!(!v.is_known());
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"brand_new_input\"");
        let k: AuthMethod = serde_json::from_str("\"azure-ad\"").unwrap();
        assert_eq!(k, AuthMethod::AzureAd);
        assert_eq!(IntegrationProvider::ALL.len(), 12);
    }
}
