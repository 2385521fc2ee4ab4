package v1alpha1

// Condition types and reasons of the contract's condition table.
const (
	ConditionCredentialsReady = "CredentialsReady"
	ConditionConfigProjected  = "ConfigProjected"
	ConditionReady            = "Ready"
	ConditionBackendsReady    = "BackendsReady"
	// ConditionDatabaseReady is the seed operator's word for a Glance's
	// schema: glance-krm's controller reads it off the completed
	// glance-manage Jobs (reasons in messages.go, with the release rule's).
	ConditionDatabaseReady = "DatabaseReady"
	// ConditionStoresDrained (Glance) says what the store drains' records
	// say (store_drain.go).
	ConditionStoresDrained = "StoresDrained"
	ReasonDrainComplete    = "DrainComplete"
	ReasonDrainInProgress  = "DrainInProgress"
	ReasonDrainFailed      = "DrainFailed"
	// ConditionReconciling and ConditionStalled (Glance) are kstatus's
	// abnormal-true conditions, written only while true, beside Ready:
	// Stalled while a condition says the Glance failed and needs a change
	// to recover (a refused release path, no default store, a failed
	// drain), Reconciling while work is in progress. Flux's wait reads
	// them (kstatus), Argo CD's health check the reasons.
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"

	ReasonCredentialsAvailable      = "CredentialsAvailable"
	ReasonWaitingForCredentials     = "WaitingForCredentials"
	ReasonTargetClusterUnavailable  = "TargetClusterUnavailable"
	ReasonConfigProjected           = "ConfigProjected"
	ReasonWaitingForProjection      = "WaitingForProjection"
	ReasonAllReady                  = "AllReady"
	ReasonNotAllReady               = "NotAllReady"
	ReasonAllBackendsProjected      = "AllBackendsProjected"
	ReasonWaitingForBackends        = "WaitingForBackends"
	EventReasonGlanceBackendSkipped = "GlanceBackendSkipped"

	// CredentialsAccessKeyID and CredentialsSecretAccessKey are the data
	// keys of a credentials Secret, fixed by contract.
	CredentialsAccessKeyID     = "access-key-id"
	CredentialsSecretAccessKey = "secret-access-key"
)
