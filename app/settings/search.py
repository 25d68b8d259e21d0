"""Settings of search: the embedding model, retrieval, votes, ingestion."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from app.settings.base import Group, env


class EmbeddingsSettings(Group):
    """The embedding model and the CPU it may use."""

    embedding_model_path: str | None = Field(
        None,
        validation_alias=env("DESKMATE_EMBEDDING_MODEL_PATH"),
        description="Local sentence-transformers model folder; default: the packaged all-MiniLM-L6-v2.",
    )
    embedding_backend: Literal["onnx", "torch"] = Field(
        "onnx",
        validation_alias=env("DESKMATE_EMBEDDING_BACKEND"),
        description=(
            "What runs the embedding model. onnx: ONNX Runtime on a copy of the model exported once into the data "
            "dir (models/onnx, with its checksum; the export runs in a child process, so serving never imports "
            "torch; a machine-wide copy in ~/.cache/deskmate/onnx spares the next data dir the export). torch: "
            "sentence-transformers, the reference. The knowledge base records the encoder its "
            "vectors came from; a switch re-embeds every document at start-up, never mixing vectors."
        ),
    )
    embedding_onnx_variant: Literal["fp32", "int8", "int8-ffn-fp32"] = Field(
        "int8-ffn-fp32",
        validation_alias=env("DESKMATE_EMBEDDING_ONNX_VARIANT"),
        description=(
            "The ONNX model's precision: fp32 (the same vectors as torch), int8 (every matrix product in 8 "
            "bits: nDCG@10 -.007 on s10, over the .005 bar), int8-ffn-fp32 (8 bits except the feed-forward "
            "output projections: within .001 of torch on tv-test and s10, about 3x faster than fp32 per "
            "question). Chosen by retrieval quality (bench/retrieval.py --encoders); see docs/benchmarks.md."
        ),
    )
    torch_threads: int = Field(
        1,
        ge=1,
        le=64,
        validation_alias=env("DESKMATE_TORCH_THREADS"),
        description=(
            "Threads the embedding model (and a reranker) compute a question with. 1 suits a service: "
            "concurrent turns already use the other cores, and on 2 busy cores a second thread cost a "
            "query ~15x the CPU for no gain. Batches of chunks use DESKMATE_INDEX_TORCH_THREADS."
        ),
    )
    index_torch_threads: int = Field(
        0,
        ge=0,
        le=64,
        validation_alias=env("DESKMATE_INDEX_TORCH_THREADS"),
        description=(
            "Threads the embedding model computes a batch of chunks with while indexing; 0: every core the "
            "process may run on. A batch keeps every thread busy, so on 2 idle cores it embeds about "
            "twice as fast as on one; a question still runs on DESKMATE_TORCH_THREADS."
        ),
    )

    @field_validator("embedding_model_path", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value


class RetrievalSettings(Group):
    """Search and the answer's evidence (nodes/support/retrieval.py; defaults tuned on the e-manual benchmark's dev split)."""

    top_k: int = Field(
        5, ge=1, le=50, validation_alias=env("DESKMATE_TOP_K"), description="Chunks handed to the answer step."
    )
    candidate_k: int = Field(
        20,
        ge=1,
        le=200,
        validation_alias=env("DESKMATE_CANDIDATE_K"),
        description="Candidates fetched from the index before filtering.",
    )
    min_score: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_MIN_SCORE"),
        description=(
            "Confidence (the 0..1 retrieval `score`) below which a chunk does not "
            "count as an answer. Retuned for hybrid scores on the bundled KB: "
            'on-topic questions score 0.4–0.8, off-topic ones ("what is the capital '
            'of France") under 0.25.'
        ),
    )
    answer_confidence: Literal["calibrated", "score"] = Field(
        "calibrated",
        validation_alias=env("DESKMATE_ANSWER_CONFIDENCE"),
        description=(
            "How deskmate decides it has an answer: `calibrated` — the probability that the best article "
            "is the right one, from evidence gathered per article (fitted on development data by "
            "`bench/fit_confidence.py`, reported as `confidence` on every reply); `score` — the best "
            "chunk's retrieval score against `DESKMATE_MIN_SCORE` (the behaviour before calibration)."
        ),
    )
    answer_min_confidence: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_ANSWER_MIN_CONFIDENCE"),
        description="With calibrated confidence: answer from the knowledge base at or above this probability, "
        "say it was not found below it. Empty: the threshold chosen with the model on development "
        "data.",
    )
    max_searches: int = Field(
        3,
        ge=1,
        le=5,
        validation_alias=env("DESKMATE_MAX_SEARCHES"),
        description="Knowledge-base searches allowed per turn.",
    )
    fact_path: bool = Field(
        False,
        validation_alias=env("DESKMATE_FACT_PATH"),
        description=(
            'Fact questions ("what is the VPN server address?", "how many days until '
            'my password expires?") get one short cited sentence instead of the '
            "section that answers, when it is found confidently. Off by default: "
            "measured, it added nothing over the composed answer (see Benchmarks)."
        ),
    )
    fact_min_confidence: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_FACT_MIN_CONFIDENCE"),
        description=(
            "Confidence (0..1) the fact path's answer span needs; below it the normal answer is given. "
            "Tuned on tv-dev with `bench/answers.py`."
        ),
    )
    lexical_enabled: bool = Field(
        True,
        validation_alias=env("DESKMATE_LEXICAL"),
        description="BM25 beside the dense index (hybrid retrieval); false: dense only.",
    )
    lexical_backend: Literal["memory", "postgres"] = Field(
        "memory",
        validation_alias=env("DESKMATE_LEXICAL_BACKEND"),
        description=(
            "Where the BM25 index lives: `memory` (each process keeps its own copy, rebuilt from Chroma at "
            "start-up and following other replicas' writes within ~2 s; the fastest), `postgres` (one "
            "index in the database every replica shares, same scores, a write visible everywhere at "
            "once, nothing rebuilt at start-up; a few ms more per query; needs a postgresql:// "
            "DESKMATE_DATABASE_URL)."
        ),
    )
    fusion: Literal["weighted", "rrf"] = Field(
        "weighted",
        validation_alias=env("DESKMATE_FUSION"),
        description="How dense and BM25 rankings merge: weighted scores, or reciprocal-rank fusion.",
    )
    dense_weight: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_DENSE_WEIGHT"),
        description=("Weight of the cosine in score = w·cosine + (1 − w)·BM25 share (tuned on tv-dev)."),
    )
    rrf_k: int = Field(
        60,
        ge=1,
        le=1000,
        validation_alias=env("DESKMATE_RRF_K"),
        description="Reciprocal-rank fusion constant (DESKMATE_FUSION=rrf).",
    )
    section_aggregation: bool = Field(
        True,
        validation_alias=env("DESKMATE_SECTION_AGGREGATION"),
        description="Rank document sections by their best chunk and cap chunks per section.",
    )
    max_chunks_per_section: int = Field(
        2,
        ge=1,
        le=10,
        validation_alias=env("DESKMATE_MAX_CHUNKS_PER_SECTION"),
        description="Chunks of one section kept among the results.",
    )
    neighbour_radius: int = Field(
        1,
        ge=0,
        le=3,
        validation_alias=env("DESKMATE_NEIGHBOUR_RADIUS"),
        description=("Adjacent chunks (same section) of a confident top hit added for context; `0`: off."),
    )
    reranker_model: str | None = Field(
        None,
        validation_alias=env("DESKMATE_RERANKER_MODEL"),
        description=(
            "Cross-encoder (local sentence-transformers folder, or a name already in the local cache) "
            "that reranks candidates; unset: no reranker. A model that cannot be loaded stops start-up "
            "with a clear error."
        ),
    )
    rerank_top_n: int = Field(
        30,
        ge=1,
        le=200,
        validation_alias=env("DESKMATE_RERANK_TOP_N"),
        description="Candidates the reranker rescores (neighbours included).",
    )
    filter_secondary_boost: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_FILTER_SECONDARY_BOOST"),
        description="Search filters: score × (1 + boost × share of secondary fields matched).",
    )

    @field_validator("reranker_model", mode="before")
    @classmethod
    def _empty_reranker_means_none(cls, value):
        return None if isinstance(value, str) and not value.strip() else value


class FeedbackSettings(Group):
    """How users' votes move retrieval."""

    feedback_adjustment: bool = Field(
        True,
        validation_alias=env("DESKMATE_FEEDBACK_ADJUSTMENT"),
        description=("Let up/down votes adjust retrieval scores of the cited chunks (votes are stored either way)."),
    )
    feedback_min_votes: int = Field(
        3,
        ge=1,
        le=1000,
        validation_alias=env("DESKMATE_FEEDBACK_MIN_VOTES"),
        description=("Votes (on similar questions) a chunk needs before its score is adjusted."),
    )
    feedback_max_multiplier: float = Field(
        1.2,
        ge=1.0,
        le=4.0,
        validation_alias=env("DESKMATE_FEEDBACK_MAX_MULTIPLIER"),
        description=(
            "Feedback multiplies a chunk's score by at most this and at least its inverse (tuned on "
            "tv-dev: stronger hurt)."
        ),
    )
    feedback_similarity: float = Field(
        0.85,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_FEEDBACK_SIMILARITY"),
        description="A vote counts for searches whose question has at least this cosine similarity to the voted one.",
    )
    feedback_vote_window_hours: float = Field(
        168.0,
        gt=0,
        le=87600,
        validation_alias=env("DESKMATE_FEEDBACK_VOTE_WINDOW_HOURS"),
        description=(
            "How long an answer can still be voted on: an answer nobody voted on is forgotten after this "
            "(its question and which passages it cited); voted answers are kept."
        ),
    )
    feedback_cache_s: float = Field(
        60.0,
        ge=0,
        le=3600,
        validation_alias=env("DESKMATE_FEEDBACK_CACHE_S"),
        description=("How long the vote table is cached (votes made by this process apply at once)."),
    )


class IngestionSettings(Group):
    """Uploads and parsing: sizes, time and memory a document may take, chunk size."""

    max_upload_bytes: int = Field(
        20 * 1024 * 1024,
        ge=1,
        validation_alias=env("DESKMATE_MAX_UPLOAD_BYTES"),
        description="Largest document upload accepted.",
    )
    parse_timeout_s: float = Field(
        5.0,
        gt=0,
        le=300,
        validation_alias=env("DESKMATE_PARSE_TIMEOUT_S"),
        description=(
            "Longest time one document may take to parse, in its worker process, before it is refused "
            "(422) and the worker replaced."
        ),
    )
    parse_memory_mb: int = Field(
        512,
        ge=64,
        le=65536,
        validation_alias=env("DESKMATE_PARSE_MEMORY_MB"),
        description="Address-space limit of a parse worker process; a document needing more is refused.",
    )
    parse_workers: int = Field(
        1,
        ge=1,
        le=16,
        validation_alias=env("DESKMATE_PARSE_WORKERS"),
        description=("Warm parse worker processes (each about 25 MB); uploads wait for a free one."),
    )
    chunk_max_tokens: int = Field(
        200,
        ge=32,
        le=256,
        validation_alias=env("DESKMATE_CHUNK_MAX_TOKENS"),
        description="Upper bound of a chunk, in embedding-model tokens.",
    )
