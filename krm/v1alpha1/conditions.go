package v1alpha1

// Condition types and reasons of the contract's condition table.
const (
	ConditionCredentialsReady = "CredentialsReady"
	ConditionConfigProjected  = "ConfigProjected"
	ConditionReady            = "Ready"
	ConditionBackendsReady    = "BackendsReady"

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
